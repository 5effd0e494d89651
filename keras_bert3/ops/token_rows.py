"""The layout in which an encoder block's dense layers see its tokens: one
`(batch * seq, hidden)` matrix of token rows where that runs faster, the
`(batch, seq, hidden)` tensor elsewhere.

The dense layers, residuals and LayerNorms of a block act on each token
alone, so either layout gives the same values. Rows are faster at inference
(TensorFlow then fuses matmul, bias and GELU into one oneDNN op) and when
training on JAX, not when training on TensorFlow
(`bench/profile_pretraining_step.py` profiles the step).
"""

import keras
from keras import ops


def token_rows(x, *, training):
    """`(batch, seq, hidden)` -> `(batch * seq, hidden)` where the dense layers
    run faster on rows; elsewhere `x` as it is (`token_rows_reference`).
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
    """`x`, from `token_rows` or a per-token function of its rows, in `shape`
    `(batch, seq, hidden)`: reshaped if it is rows, else as it is.

    Example:
    >>> from_token_rows(np.ones((10, 8), "float32"), (2, 5, 8)).shape
    (2, 5, 8)
    """
    return ops.reshape(x, shape) if len(x.shape) != len(shape) else x
