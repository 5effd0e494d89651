"""Attention probabilities: a softmax over the keys a query may attend to.

The reference computes in float32 (in float16, -1e9 overflows). At inference on TensorFlow on CPUs
with oneDNN, bfloat16 and float32 scores stay in their dtype, sparing two casts a block: oneDNN's
softmax computes in float32 (TensorFlow's own computes bfloat16 in bfloat16).
"""

import keras
from keras import ops

from keras_bert3.distribution.devices import accelerator_type
from keras_bert3.distribution.devices import onednn_enabled

MASKED_SCORE_DROP = 1e9


def masked_softmax(scores, allowed, *, training):
    """Softmax of `scores` (`(..., queries, keys)`) over the last axis, no weight where `allowed`
    (broadcastable to `scores`) is 0, in `scores`' dtype: `masked_softmax_reference`'s values.

    Example:
    >>> masked_softmax(np.zeros((1, 2, 3, 3), "float32"), np.array([[[[1, 1, 0]]]]), training=False)[0, 0, 0]
    array([0.5, 0.5, 0. ], dtype=float32)
    """
    scores = ops.convert_to_tensor(scores)
    in_own_dtype = (
        keras.backend.backend() == "tensorflow"
        and not training
        and keras.backend.standardize_dtype(scores.dtype) in ("bfloat16", "float32")
        and accelerator_type() == "cpu"
        and onednn_enabled()
    )
    if not in_own_dtype:
        return masked_softmax_reference(scores, allowed)
    drop = (ops.cast(allowed, scores.dtype) - ops.cast(1, scores.dtype)) * ops.cast(MASKED_SCORE_DROP, scores.dtype)
    return ops.softmax(scores + drop, axis=-1)


def masked_softmax_reference(scores, allowed):
    """`masked_softmax` in float32: masked keys' scores lowered by 1e9, then cast to `scores`' dtype.

    Example:
    >>> masked_softmax_reference(np.zeros((1, 1, 1, 2), "float32"), np.array([[[[1, 0]]]]))[0, 0, 0]
    array([1., 0.], dtype=float32)
    """
    scores = ops.convert_to_tensor(scores)
    drop = (ops.cast(allowed, "float32") - 1.0) * MASKED_SCORE_DROP
    return ops.cast(ops.softmax(ops.cast(scores, "float32") + drop, axis=-1), scores.dtype)
