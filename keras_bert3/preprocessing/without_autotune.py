"""Moved to `keras_bert3.data.without_autotune` (the pretraining pipelines use
it too); this name works for one more release, with a `DeprecationWarning`."""

from keras_bert3.data.without_autotune import without_autotune  # noqa: F401
from keras_bert3.renamed import warn_renamed

warn_renamed("keras_bert3.preprocessing.without_autotune", "keras_bert3.data.without_autotune")
