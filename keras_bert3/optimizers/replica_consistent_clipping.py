"""AdamW and LAMB whose global-norm clipping sees the global gradient under
TensorFlow strategies (Keras 3 clips each replica's share on its own)."""

import keras

from keras_bert3.distribution.cross_replica import clip_by_global_norm_across_replicas


class _ClipAcrossReplicas:
    def _clip_gradients(self, grads):
        if self.global_clipnorm and self.global_clipnorm > 0:
            clipped = clip_by_global_norm_across_replicas(grads, self.global_clipnorm)
            if clipped is not None:
                return clipped
        return super()._clip_gradients(grads)


@keras.saving.register_keras_serializable(package="keras_bert3")
class BertAdamW(_ClipAcrossReplicas, keras.optimizers.AdamW):
    """`keras.optimizers.AdamW` with replica-consistent `global_clipnorm`."""


@keras.saving.register_keras_serializable(package="keras_bert3")
class BertLamb(_ClipAcrossReplicas, keras.optimizers.Lamb):
    """`keras.optimizers.Lamb` with replica-consistent `global_clipnorm`."""
