"""Global-norm clipping that sees the global gradient under TensorFlow
strategies (Keras 3 clips each replica's share on its own), for the BERT
optimizers: `BertAdamW` (bert_adamw.py) and `BertLamb`."""

import keras

from keras_bert3.distribution.cross_replica import clip_by_global_norm_across_replicas


class ClipAcrossReplicas:
    """A mixin for a Keras optimizer: `global_clipnorm` on the gradient summed over replicas."""

    def _clip_gradients(self, grads):
        if self.global_clipnorm and self.global_clipnorm > 0:
            clipped = clip_by_global_norm_across_replicas(grads, self.global_clipnorm)
            if clipped is not None:
                return clipped
        return super()._clip_gradients(grads)


@keras.saving.register_keras_serializable(package="keras_bert3")
class BertLamb(ClipAcrossReplicas, keras.optimizers.Lamb):
    """`keras.optimizers.Lamb` with replica-consistent `global_clipnorm`."""
