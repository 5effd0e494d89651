"""Cross-entropy from logits over a wide vocabulary, with top-1 hits, in each backend's fastest form."""

import keras
from keras import ops


def sparse_cross_entropy_with_hits(labels, logits):
    """Per-row cross-entropy of int `labels` `(...)` under `logits` `(..., classes)`, and 1.0 where the label has the
    largest logit: `(loss, hits)`, float `(...)` in the logits' dtype. On JAX `gathered_cross_entropy_with_hits` (Keras'
    op builds a vocabulary-wide one-hot, slow in XLA on CPUs; ties count as hits), else the reference.

    Example:
    >>> loss, hits = sparse_cross_entropy_with_hits(np.array([2]), np.array([[0.0, 1.0, 3.0]]))
    >>> float(loss[0]), float(hits[0])
    (0.1698..., 1.0)
    """
    if keras.backend.backend() == "jax":
        return gathered_cross_entropy_with_hits(labels, logits)
    return sparse_cross_entropy_with_hits_reference(labels, logits)


def gathered_cross_entropy_with_hits(labels, logits):
    """`logsumexp(logits) - logits[label]` (a gather), and hits as "the label's
    logit is the maximum" (a tie counts as a hit).

    Example:
    >>> loss, hits = gathered_cross_entropy_with_hits(np.array([0]), np.array([[2.0, 1.0]]))
    >>> float(loss[0]), float(hits[0])  # log(1 + e^-1), and class 0 has the top logit.
    (0.3132..., 1.0)
    """
    label_logits = ops.take_along_axis(logits, ops.expand_dims(labels, -1), axis=-1)[..., 0]
    loss = ops.logsumexp(logits, axis=-1) - label_logits
    return loss, ops.cast(label_logits >= ops.max(logits, axis=-1), logits.dtype)


def sparse_cross_entropy_with_hits_reference(labels, logits):
    """Keras' `sparse_categorical_crossentropy(from_logits=True)`, and hits from
    `argmax` (a tie goes to the first class).

    Example:
    >>> loss, hits = sparse_cross_entropy_with_hits_reference(np.array([0]), np.array([[2.0, 1.0]]))
    >>> float(loss[0]), float(hits[0])
    (0.3132..., 1.0)
    """
    loss = keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
    return loss, ops.cast(ops.equal(ops.argmax(logits, axis=-1), labels), logits.dtype)
