"""`x @ kernel + bias` whose bfloat16 products accumulate in float32 on JAX, forward and backward:
XLA's CPU kernels for a bfloat16 matmul are slow when they write bfloat16, which `keras.ops.matmul`
and JAX's gradient ask for. TensorFlow's oneDNN kernels accumulate in float32 either way.
"""

import functools

import keras
from keras import ops


def dense_product(x, kernel, bias=None, transpose_kernel=False):
    """`x @ kernel + bias` for `x` `(..., k)` and `kernel` `(k, n)` (or `(n, k)` with `transpose_kernel`,
    as a tied embedding is): `(..., n)` in `x`'s dtype. On JAX with bfloat16 operands, accumulated in
    float32 (gradients too) and equal to `dense_product_reference` up to bfloat16 rounding; elsewhere exactly.

    Example:
    >>> dense_product(np.ones((2, 3), "float32"), np.ones((3, 4), "float32")).shape
    (2, 4)
    """
    x, kernel = ops.convert_to_tensor(x), ops.convert_to_tensor(kernel)
    if keras.backend.backend() != "jax" or x.dtype != "bfloat16" or kernel.dtype != "bfloat16":
        y = ops.matmul(x, ops.transpose(kernel) if transpose_kernel else kernel)
        return y if bias is None else _add_bias(y, ops.cast(bias, y.dtype))
    units = kernel.shape[0] if transpose_kernel else kernel.shape[-1]
    bias = ops.zeros((units,), "bfloat16") if bias is None else ops.cast(bias, "bfloat16")
    return _jax_bfloat16_dense()(x, kernel, bias, transpose_kernel)


def dense_product_blocks(x, kernel, bias, blocks: int):
    """`dense_product(x, kernel, bias)` split into `blocks` equal column blocks, as `blocks` products `(..., n /
    blocks)`: no copies for the split (query, key and value from one kernel), nor for the gradients' stacking."""
    width = kernel.shape[-1] // blocks
    return [
        dense_product(x, kernel[:, i * width : (i + 1) * width], bias[i * width : (i + 1) * width])
        for i in range(blocks)
    ]


def dense_product_reference(x, kernel, bias=None, transpose_kernel=False):
    """`dense_product` with `keras.ops` only: a matmul in the operands' dtype, then the bias.

    Example:
    >>> dense_product_reference(np.ones((2, 3), "float32"), np.ones((4, 3), "float32"), transpose_kernel=True).shape
    (2, 4)
    """
    y = ops.matmul(x, ops.transpose(kernel) if transpose_kernel else kernel)
    return y if bias is None else y + ops.cast(bias, y.dtype)


def _add_bias(y, bias):
    """`y + bias`; on TensorFlow a `BiasAdd`, which grappler fuses with the matmul (and a GELU after)."""
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        return tf.nn.bias_add(y, bias)
    return y + bias


@functools.cache
def _jax_bfloat16_dense():
    """The JAX function with its custom gradient, built on first use."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    def matmul_float32(a, b, contracting):
        return lax.dot_general(a, b, (contracting, ((), ())), preferred_element_type=jnp.float32)

    def kernel_axis(transpose_kernel):
        """The kernel's axis of length k (the one `x` contracts with)."""
        return 1 if transpose_kernel else 0

    @functools.partial(jax.custom_vjp, nondiff_argnums=(3,))
    def dense(x, kernel, bias, transpose_kernel):
        y = matmul_float32(x, kernel, ((x.ndim - 1,), (kernel_axis(transpose_kernel),)))
        return (y + bias.astype(jnp.float32)).astype(x.dtype)

    def forward(x, kernel, bias, transpose_kernel):
        return dense(x, kernel, bias, transpose_kernel), (x, kernel)

    def backward(transpose_kernel, saved, grad):
        x, kernel = saved
        leading = tuple(range(x.ndim - 1))
        # Contract over the output axis of both (no transposed copies).
        grad_x = matmul_float32(grad, kernel, ((x.ndim - 1,), (1 - kernel_axis(transpose_kernel),)))
        if transpose_kernel:  # (n, k), straight from the products.
            grad_kernel = matmul_float32(grad, x, (leading, leading))
        else:
            grad_kernel = matmul_float32(x, grad, (leading, leading))
        rows = grad.reshape(-1, grad.shape[-1])
        grad_bias = matmul_float32(jnp.ones((1, rows.shape[0]), grad.dtype), rows, ((1,), (0,)))[0]
        return grad_x.astype(x.dtype), grad_kernel.astype(kernel.dtype), grad_bias.astype(grad.dtype)

    dense.defvjp(forward, backward)
    return dense
