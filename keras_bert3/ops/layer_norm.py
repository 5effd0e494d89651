"""LayerNorm over the last axis in two fast forms.

- At inference on TensorFlow on CPUs: the form that TensorFlow's oneDNN graph rewrite turns into one
  `_MklLayerNorm` kernel (Keras' LayerNorm is some ten ops, each paying per-op dispatch): Keras 2's
  form, the rows as one NCHW image with a channel per row, `FusedBatchNormV3` in training mode, then
  gamma and beta. Core TensorFlow ops, so TF Serving serves it.
- When training on JAX: the textbook gradient, which keeps the input in its own dtype and two float32
  numbers a row (mean and reciprocal deviation); JAX's own gradient of Keras' ops keeps float32 copies
  of the input.
"""

import functools

import keras
from keras import ops

from keras_bert3.distribution.devices import accelerator_type


def layer_norm(x, gamma, beta, epsilon, *, training):
    """LayerNorm of `x` over its last axis, scaled by `gamma` and shifted by `beta`, in `x`'s dtype:
    `layer_norm_reference`'s values, fused on TensorFlow on CPUs when not training (rank 2 or 3; the
    fused form's gradient is untested), with the textbook gradient when training on JAX; the reference
    itself elsewhere.

    Example:
    >>> layer_norm(np.ones((4, 8), "float32"), np.ones(8), np.zeros(8), 1e-12, training=False).shape
    (4, 8)
    """
    x = ops.convert_to_tensor(x)
    if keras.backend.backend() == "jax" and training:
        return _jax_layer_norm(float(epsilon))(x, ops.convert_to_tensor(gamma), ops.convert_to_tensor(beta))
    if keras.backend.backend() != "tensorflow" or training or len(x.shape) not in (2, 3) or accelerator_type() != "cpu":
        return layer_norm_reference(x, gamma, beta, epsilon)
    import tensorflow as tf

    shape = tf.shape(x)
    rows = tf.reduce_prod(shape[:-1], keepdims=True)
    image = tf.reshape(x, tf.concat([[1], rows, shape[-1:], [1]], axis=0))
    normalized, _, _ = tf.compat.v1.nn.fused_batch_norm(
        image,
        scale=tf.ones(rows, "float32"),
        offset=tf.zeros(rows, "float32"),
        epsilon=epsilon,
        data_format="NCHW",
        is_training=True,
    )
    return tf.reshape(normalized, shape) * tf.cast(gamma, x.dtype) + tf.cast(beta, x.dtype)


def layer_norm_reference(x, gamma, beta, epsilon, training=None):
    """Keras' LayerNorm over the last axis (computed in at least float32), in `x`'s dtype.

    Example:
    >>> layer_norm_reference(np.ones((4, 8), "float32"), np.ones(8), np.zeros(8), 1e-12).shape
    (4, 8)
    """
    x = ops.convert_to_tensor(x)
    return ops.cast(ops.layer_normalization(x, gamma, beta, axis=-1, epsilon=epsilon), x.dtype)


@functools.cache
def _jax_layer_norm(epsilon: float):
    """The JAX function with its gradient, computed in float32, built on first use per epsilon."""
    import jax
    import jax.numpy as jnp

    def statistics(x32):
        mean = jnp.mean(x32, axis=-1, keepdims=True)
        variance = jnp.mean(jnp.square(x32 - mean), axis=-1, keepdims=True)
        return mean, jax.lax.rsqrt(variance + epsilon)

    @jax.custom_vjp
    def layer_norm(x, gamma, beta):
        return forward(x, gamma, beta)[0]

    def forward(x, gamma, beta):
        x32 = x.astype(jnp.float32)
        mean, reciprocal_deviation = statistics(x32)
        normalized = (x32 - mean) * reciprocal_deviation
        y = normalized * gamma.astype(jnp.float32) + beta.astype(jnp.float32)
        return y.astype(x.dtype), (x, mean, reciprocal_deviation, gamma, beta)

    def backward(saved, grad):
        x, mean, reciprocal_deviation, gamma, beta = saved
        normalized = (x.astype(jnp.float32) - mean) * reciprocal_deviation
        grad = grad.astype(jnp.float32)
        rows = tuple(range(x.ndim - 1))
        grad_normalized = grad * gamma.astype(jnp.float32)
        grad_x = reciprocal_deviation * (
            grad_normalized
            - jnp.mean(grad_normalized, axis=-1, keepdims=True)
            - normalized * jnp.mean(grad_normalized * normalized, axis=-1, keepdims=True)
        )
        grad_gamma = jnp.sum(grad * normalized, axis=rows)
        grad_beta = jnp.sum(grad, axis=rows)
        return grad_x.astype(x.dtype), grad_gamma.astype(gamma.dtype), grad_beta.astype(beta.dtype)

    layer_norm.defvjp(forward, backward)
    return layer_norm
