"""The feed-forward activation of a reduced-precision training step, computed in float32: training
keeps the input for the gradient, so nothing fuses the activation, and bfloat16 element-wise kernels
are slow on CPUs. On JAX the gradient keeps the bfloat16 input, not the float32 copy JAX would keep:
the same values, fewer bytes kept and read back.
"""

import functools

import keras
from keras import ops


def feed_forward_activation(activation_fn, x, *, training):
    """`activation_fn(x)` in `x`'s dtype, computed in float32 when training on a lower precision.

    Example:
    >>> feed_forward_activation(keras.activations.gelu, keras.ops.ones((2, 4), "bfloat16"), training=True).dtype
    bfloat16
    """
    if training and x.dtype != "float32":
        if keras.backend.backend() == "jax":
            return _jax_float32_activation(activation_fn)(x)
        return ops.cast(activation_fn(ops.cast(x, "float32")), x.dtype)
    return activation_fn(x)


def feed_forward_activation_reference(activation_fn, x, *, training=None):
    """`activation_fn(x)`, in `x`'s dtype throughout.

    Example:
    >>> feed_forward_activation_reference(keras.activations.gelu, keras.ops.ones((2, 4), "bfloat16")).dtype
    bfloat16
    """
    return activation_fn(x)


@functools.cache
def _jax_float32_activation(activation_fn):
    """`activation_fn` in float32, rounded to its input's dtype; its gradient keeps only the input."""
    import jax
    import jax.numpy as jnp

    @jax.custom_vjp
    def activation(x):
        return activation_fn(x.astype(jnp.float32)).astype(x.dtype)

    def forward(x):
        return activation(x), x

    def backward(x, grad):
        _, pullback = jax.vjp(activation_fn, x.astype(jnp.float32))
        return (pullback(grad.astype(jnp.float32))[0].astype(x.dtype),)

    activation.defvjp(forward, backward)
    return activation
