"""Queries, keys and values split from the fused projection, heads-major."""

import functools

import keras
from keras import ops


def split_heads(qkv):
    """`(batch, seq, 3, heads, head_dim)` -> three `(batch, heads, seq, head_dim)`, as `split_heads_reference`; on JAX
    with a gradient that stacks the three cotangents once (JAX's own pads each to the full size and adds them).

    Example:
    >>> q, k, v = split_heads(np.zeros((2, 5, 3, 4, 8), "float32"))
    >>> tuple(q.shape)
    (2, 4, 5, 8)
    """
    if keras.backend.backend() == "jax":
        return _jax_split_heads()(qkv)
    return split_heads_reference(qkv)


def split_heads_reference(qkv):
    """`split_heads` with `keras.ops` only: a transpose, then an unstack.

    Example:
    >>> q, k, v = split_heads_reference(np.zeros((2, 5, 3, 4, 8), "float32"))
    """
    return tuple(ops.unstack(ops.transpose(qkv, (2, 0, 3, 1, 4)), 3, axis=0))


@functools.cache
def _jax_split_heads():
    """The JAX function with its custom gradient, built on first use."""
    import jax
    import jax.numpy as jnp

    @jax.custom_vjp
    def split(qkv):
        parts = jnp.transpose(qkv, (2, 0, 3, 1, 4))
        return parts[0], parts[1], parts[2]

    def forward(qkv):
        return split(qkv), None

    def backward(_, grads):
        return (jnp.transpose(jnp.stack(grads), (1, 3, 0, 2, 4)),)

    split.defvjp(forward, backward)
    return split
