"""Self-attention as one fused kernel: on JAX, `jax.nn.dot_product_attention`,
which on NVIDIA GPUs runs cuDNN's flash attention (no `(queries, keys)`
scores in device memory, padded keys skipped) for bfloat16 and float16 inputs
with a head size of at most 256 and a multiple of 8, and XLA's attention
elsewhere (the same function as the encoder block's own matmul-softmax-matmul).

No kernel here has dropout on the attention probabilities, so the encoder
block takes this path only where that dropout is 0 (`attention_dropout=0`, an
option that changes BERT's recipe, or inference). Keras'
`ops.dot_product_attention` reaches the same JAX function but passes neither
the keys' lengths (padding) nor a per-row mask in the shape cuDNN takes.
"""

import functools

import keras
from keras import ops


def fused_attention_available() -> bool:
    """Whether `fused_attention` runs on this backend (JAX); elsewhere the
    encoder block computes attention with its own ops."""
    return keras.backend.backend() == "jax"


def fused_attention(query, key, value, allowed):
    """Softmax attention of `query` over `key`/`value`, each
    `(batch, seq, heads, head_dim)`, scaled by `1/sqrt(head_dim)`: the context,
    `(batch, queries, heads, head_dim)`, in `query`'s dtype.

    `allowed` is `(batch, keys)`, 1 for the real tokens, which must be each
    row's first tokens (right padding, as `BertSegmentJoiner` makes): the keys'
    lengths are passed, and cuDNN skips the padding; or `(batch, queries,
    keys)`, 1 where a query may attend to a key (packed rows), passed as a mask.
    A query with no allowed key (packed rows' padding) gets an output no loss
    should read.

    Example:
    >>> import numpy as np
    >>> x = np.random.rand(2, 5, 4, 8).astype("float32")
    >>> tuple(fused_attention(x, x, x, np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])).shape)
    (2, 5, 4, 8)
    """
    import jax
    import jax.numpy as jnp

    implementation = "cudnn" if _cudnn_runs(query) else "xla"
    allowed = jnp.asarray(allowed)
    if allowed.ndim == 2:
        lengths = jnp.sum(allowed.astype("int32"), axis=1)
        return jax.nn.dot_product_attention(
            query, key, value, key_value_seq_lengths=lengths, implementation=implementation
        )
    mask = allowed[:, None, :, :].astype("bool")  # (batch, 1, queries, keys): the same for every head.
    return jax.nn.dot_product_attention(query, key, value, mask=mask, implementation=implementation)


def split_token_major(qkv):
    """`(batch, seq, 3, heads, head_dim)` -> query, key and value, each
    `(batch, seq, heads, head_dim)` (the layout `fused_attention` takes, no
    transpose). On JAX the gradient is one stack of the three cotangents
    (JAX's own gradient of three slices pads each to the full size and adds).

    Example:
    >>> q, k, v = split_token_major(np.zeros((2, 5, 3, 4, 8), "float32"))
    >>> tuple(q.shape)
    (2, 5, 4, 8)
    """
    if keras.backend.backend() == "jax":
        return _jax_split_token_major()(qkv)
    return tuple(ops.unstack(qkv, 3, axis=2))


@functools.cache
def _jax_split_token_major():
    import jax
    import jax.numpy as jnp

    @jax.custom_vjp
    def split(qkv):
        return qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]

    def forward(qkv):
        return split(qkv), None

    def backward(_, grads):
        return (jnp.stack(grads, axis=2),)

    split.defvjp(forward, backward)
    return split


def _cudnn_runs(query) -> bool:
    """cuDNN's flash attention takes this query: on a GPU, bfloat16 or float16,
    a head size that is a multiple of 8 and at most 256 (Hopper)."""
    dtype = keras.backend.standardize_dtype(query.dtype)
    head_dim = query.shape[-1]
    return _on_gpu() and dtype in ("bfloat16", "float16") and head_dim % 8 == 0 and head_dim <= 256


@functools.cache
def _on_gpu() -> bool:
    import jax

    return jax.default_backend() == "gpu"


def attention_reference(query, key, value, allowed):
    """`fused_attention` written with `keras.ops` (the encoder block's own
    arithmetic: float32 scores, masked keys lowered by 1e9): the oracle its
    tests compare with.

    Example:
    >>> x = np.random.rand(1, 3, 2, 8).astype("float32")
    >>> tuple(attention_reference(x, x, x, np.ones((1, 3))).shape)
    (1, 3, 2, 8)
    """
    from keras_bert3.ops.masked_softmax import masked_softmax_reference

    query, key, value = (ops.transpose(t, (0, 2, 1, 3)) for t in (query, key, value))
    scale = ops.cast(1.0 / query.shape[-1] ** 0.5, query.dtype)
    scores = ops.matmul(query * scale, ops.swapaxes(key, -1, -2))
    allowed = ops.convert_to_tensor(allowed)
    allowed = allowed[:, None, None, :] if len(allowed.shape) == 2 else allowed[:, None, :, :]
    probs = masked_softmax_reference(scores, allowed)
    return ops.transpose(ops.matmul(probs, value), (0, 2, 1, 3))
