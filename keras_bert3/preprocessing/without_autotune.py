"""Moved to `keras_bert3.data.without_autotune`; this name warns for one more release."""

from keras_bert3.data.without_autotune import without_autotune  # noqa: F401
from keras_bert3.renamed import warn_renamed

warn_renamed("keras_bert3.preprocessing.without_autotune", "keras_bert3.data.without_autotune")
