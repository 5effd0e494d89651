"""The layout of an encoder block's tokens for its per-token layers (the same values either way):
`(batch * seq, hidden)` rows at inference (TensorFlow fuses matmul, bias and GELU then) and when
training on JAX; `(batch, seq, hidden)` when training on TensorFlow.
"""

import keras
from keras import ops


def token_rows(x, *, training):
    """`(batch, seq, hidden)` -> `(batch * seq, hidden)` where rows run faster, else `x` as it is;
    `from_token_rows` gives back the 3-D shape.

    Example:
    >>> token_rows(np.ones((2, 5, 8), "float32"), training=False).shape
    (10, 8)
    """
    if not training or keras.backend.backend() == "jax":
        return ops.reshape(x, (-1, ops.shape(x)[-1]))
    return x


def token_rows_reference(x, *, training=None):
    """The plain layout: `x` as it is, `(batch, seq, hidden)`.

    Example:
    >>> token_rows_reference(np.ones((2, 5, 8), "float32")).shape
    (2, 5, 8)
    """
    return x


def from_token_rows(x, shape):
    """`x` (from `token_rows`, or a per-token function of it) in `shape` `(batch, seq, hidden)`.

    Example:
    >>> from_token_rows(np.ones((10, 8), "float32"), (2, 5, 8)).shape
    (2, 5, 8)
    """
    return ops.reshape(x, shape) if len(x.shape) != len(shape) else x
