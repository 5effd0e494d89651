"""The feed-forward activation of a reduced-precision training step, computed
in float32.

Training keeps the activation's input for its gradient, so there is nothing
for the compiler to fuse the activation into, and TensorFlow's bfloat16
element-wise kernels are slow on CPUs: the activation (GELU's erf or tanh,
and their gradients) runs faster on float32 values, rounded once after.

On JAX the gradient keeps the activation's input as it came (bfloat16), not
the float32 copy JAX's own differentiation keeps: the same values, computed
from the same float32 numbers, with a third of the bytes kept and read back
(on a GPU, BERT-large's float32 copies were a tenth of a step's kernel time:
`bench/gpu_step_profile.py`).
"""

import functools

import keras
from keras import ops


def feed_forward_activation(activation_fn, x, *, training):
    """`activation_fn(x)` in `x`'s dtype: computed in float32 and rounded once
    when training with a `x` of another dtype (bfloat16, float16), else
    `feed_forward_activation_reference`.

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
    """`activation_fn` computed in float32 and rounded to its input's dtype,
    with a gradient that keeps only the input (see the module docstring)."""
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
