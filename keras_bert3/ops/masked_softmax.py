"""Attention probabilities: a softmax over the keys a query may attend to.

The reference lifts the scores to float32, lowers the masked keys' scores by
1e9 and takes the softmax there, then casts back: right everywhere, and the
only safe form in float16, where -1e9 overflows. At inference on TensorFlow
on CPUs with oneDNN on (x86 builds, unless `TF_ENABLE_ONEDNN_OPTS=0`), a
bfloat16 or float32 model's scores stay in their own dtype: the masked
keys' scores are lowered in that dtype (bfloat16 has float32's range, and 0
for an allowed key adds nothing) and oneDNN's softmax computes in float32
whatever its input, so the values are the reference's, and a bfloat16 model
is spared two casts of the scores per block; grappler can then fuse the
mask into the scores' product as it does in float32. TensorFlow's own
softmax kernel computes bfloat16 in bfloat16 (off by up to 2^-7), so
without oneDNN the reference runs.
"""

import keras
from keras import ops

from keras_bert3.distribution.devices import accelerator_type
from keras_bert3.distribution.devices import onednn_enabled

MASKED_SCORE_DROP = 1e9


def masked_softmax(scores, allowed, *, training):
    """Softmax of `scores` (`(..., queries, keys)`) over the last axis,
    where `allowed` (1 for a key the query may attend to, broadcastable to
    `scores`) is 0, the key gets no weight; in `scores`' dtype: the values of
    `masked_softmax_reference`, computed in that dtype on TensorFlow on CPUs
    with oneDNN at inference (bfloat16 and float32 only).

    Example:
    >>> import numpy as np
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
    """`masked_softmax` in float32: the masked keys' scores lowered by 1e9,
    the softmax, then a cast to `scores`' dtype.

    Example:
    >>> import numpy as np
    >>> masked_softmax_reference(np.zeros((1, 1, 1, 2), "float32"), np.array([[[[1, 0]]]]))[0, 0, 0]
    array([1., 0.], dtype=float32)
    """
    scores = ops.convert_to_tensor(scores)
    drop = (ops.cast(allowed, "float32") - 1.0) * MASKED_SCORE_DROP
    return ops.cast(ops.softmax(ops.cast(scores, "float32") + drop, axis=-1), scores.dtype)
