"""Texts as users pass them to a task: lists, numpy arrays or `tf.string` tensors."""

import tensorflow as tf


def python_texts(texts, *, decode: bool = False):
    """A `tf.string` (ragged) tensor as nested lists of `bytes` (of `str` with
    `decode`, invalid UTF-8 replaced); anything else is returned as given."""
    if isinstance(texts, (tf.Tensor, tf.RaggedTensor)):
        if texts.dtype != tf.string:
            raise TypeError(
                f"Expected texts; got a {texts.dtype.name} tensor. Pass strings: a list, a numpy array or a tf.string tensor."
            )
        values = texts.to_list() if isinstance(texts, tf.RaggedTensor) else texts.numpy()
        values = values.tolist() if hasattr(values, "tolist") else values
        return _decoded(values) if decode else values
    return texts


def _decoded(values):
    if isinstance(values, bytes):
        return values.decode("utf-8", "replace")
    return [_decoded(value) for value in values]
