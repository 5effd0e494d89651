"""The feed-forward activation of a reduced-precision training step, computed
in float32.

Training keeps the activation's input for its gradient, so there is nothing
for the compiler to fuse the activation into, and TensorFlow's bfloat16
element-wise kernels are slow on CPUs: the activation (GELU's erf or tanh,
and their gradients) runs faster on float32 values, rounded once after.
"""

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
        return ops.cast(activation_fn(ops.cast(x, "float32")), x.dtype)
    return activation_fn(x)


def feed_forward_activation_reference(activation_fn, x, *, training=None):
    """`activation_fn(x)`, in `x`'s dtype throughout.

    Example:
    >>> feed_forward_activation_reference(keras.activations.gelu, keras.ops.ones((2, 4), "bfloat16")).dtype
    bfloat16
    """
    return activation_fn(x)
