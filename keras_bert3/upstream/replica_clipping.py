"""`global_clipnorm` on the gradient summed over replicas under TensorFlow
strategies, where Keras 3 clips each replica's share by its own norm.

Private API (Keras): `keras.optimizers.Optimizer._clip_gradients(grads)`, the hook
through which `apply_gradients` clips (keras/src/optimizers/base_optimizer.py)."""

import keras

from keras_bert3.distribution.cross_replica import clip_by_global_norm_across_replicas
from keras_bert3.upstream.private_api import require_private

require_private(
    keras.optimizers.Optimizer,
    "_clip_gradients",
    package=keras,
    why="global_clipnorm across the replicas of a TensorFlow strategy",
)


class ClipAcrossReplicas:
    """A mixin for a Keras optimizer: `global_clipnorm` on the gradient summed over replicas."""

    def _clip_gradients(self, grads):
        if self.global_clipnorm and self.global_clipnorm > 0:
            clipped = clip_by_global_norm_across_replicas(grads, self.global_clipnorm)
            if clipped is not None:
                return clipped
        return super()._clip_gradients(grads)
