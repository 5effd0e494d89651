"""Texts as Keras users pass them to a task's `fit`, `evaluate` and `predict`:
lists, numpy arrays, or `tf.string` tensors."""

import tensorflow as tf


def python_texts(texts, *, decode: bool = False):
    """A `tf.string` tensor (or ragged tensor of words) as nested lists of
    `bytes`, or with `decode` of `str` (UTF-8, invalid bytes replaced);
    anything else is returned as given, for the task's own checks.

    A scalar tensor gives one string, which the tasks refuse as they refuse a
    bare `str` ("wrap a single text in a list").
    """
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
