"""LAMB (You et al. 2020) for large-batch BERT pretraining."""

import keras

from keras_bert3.optimizers.weight_decay_exclusions import WeightDecayExclusions
from keras_bert3.upstream.replica_clipping import ClipAcrossReplicas


@keras.saving.register_keras_serializable(package="keras_bert3")
class BertLamb(WeightDecayExclusions, ClipAcrossReplicas, keras.optimizers.Lamb):
    """`keras.optimizers.Lamb` with a replica-consistent `global_clipnorm`.

    Example:
    >>> optimizer = BertLamb(learning_rate=1e-3, weight_decay=0.01, global_clipnorm=1.0)
    """
