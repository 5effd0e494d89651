"""AdamW as PyTorch and Hugging Face compute it, for the BERT recipe."""

import keras

from keras_bert3.ops.adam_update import adam_update
from keras_bert3.optimizers.weight_decay_exclusions import WeightDecayExclusions
from keras_bert3.upstream.adam_moments import adam_moments
from keras_bert3.upstream.replica_clipping import ClipAcrossReplicas


@keras.saving.register_keras_serializable(package="keras_bert3")
class BertAdamW(WeightDecayExclusions, ClipAcrossReplicas, keras.optimizers.AdamW):
    """`keras.optimizers.AdamW` with epsilon added to the bias-corrected second moment, as
    `torch.optim.AdamW` does, and a replica-consistent `global_clipnorm`.

    Keras adds epsilon to the uncorrected moment, which makes the effective epsilon
    `epsilon / sqrt(1 - beta_2 ** t)`, many times BERT's 1e-6 in the early steps: the updates of
    parameters with small gradients (most word embeddings) are damped then.

    Example:
    >>> optimizer = BertAdamW(learning_rate=1e-4, weight_decay=0.01, epsilon=1e-6, global_clipnorm=1.0)
    """

    def __init__(self, *args, amsgrad: bool = False, **kwargs):
        if amsgrad:
            raise ValueError("BertAdamW has no amsgrad; use keras.optimizers.AdamW(amsgrad=True).")
        super().__init__(*args, **kwargs)

    def update_step(self, gradient, variable, learning_rate):
        # PyTorch's step (epsilon after the bias correction).
        adam_update(self, gradient, variable, learning_rate, *adam_moments(self, variable))
