"""Cross-entropy from logits over a wide vocabulary, with top-1 hits, in the
formulation that is fastest on each backend (`bench/bench_mlm_loss.py`)."""

import keras
from keras import ops


def sparse_cross_entropy_with_hits(labels, logits):
    """Per-row cross-entropy of int `labels` under `logits`, and 1.0 where the
    label's logit is the largest (a tie counts as a hit), else 0.0.

    JAX: `logsumexp(logits) - logits[label]`, a gather, since Keras' op builds a
    one-hot as wide as the vocabulary and XLA's CPU code runs that and `argmax`
    slowly. TensorFlow: Keras' op, which is TensorFlow's fused kernel.

    Args:
        labels: int `(..., )` class ids.
        logits: float `(..., classes)`, the same leading shape.

    Returns:
        `(loss, hits)`, both float `(...)` in the logits' dtype.

    Example:
    >>> import numpy as np
    >>> loss, hits = sparse_cross_entropy_with_hits(np.array([2]), np.array([[0.0, 1.0, 3.0]]))
    >>> float(loss[0]), float(hits[0])
    (0.1698..., 1.0)
    """
    if keras.backend.backend() == "jax":
        label_logits = ops.take_along_axis(logits, ops.expand_dims(labels, -1), axis=-1)[..., 0]
        loss = ops.logsumexp(logits, axis=-1) - label_logits
        hits = ops.cast(label_logits >= ops.max(logits, axis=-1), logits.dtype)
        return loss, hits
    loss = keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
    hits = ops.cast(ops.equal(ops.argmax(logits, axis=-1), labels), logits.dtype)
    return loss, hits
