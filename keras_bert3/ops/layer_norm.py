"""LayerNorm over the last axis at inference on TensorFlow, in the form that TensorFlow's oneDNN graph
rewrite turns into one `_MklLayerNorm` kernel (Keras' LayerNorm is some ten ops, each paying per-op
dispatch): Keras 2's form, the rows as one NCHW image with a channel per row, `FusedBatchNormV3` in
training mode, then gamma and beta. Core TensorFlow ops, so TF Serving serves it. CPUs only.
"""

import keras
from keras import ops

from keras_bert3.distribution.devices import accelerator_type


def layer_norm(x, gamma, beta, epsilon, *, training):
    """LayerNorm of `x` (rank 2 or 3) over its last axis, scaled by `gamma` and shifted by `beta`, in
    `x`'s dtype: `layer_norm_reference`'s values, fused on TensorFlow on CPUs when not training (the
    fused form's gradient is untested); the reference itself elsewhere.

    Example:
    >>> layer_norm(np.ones((4, 8), "float32"), np.ones(8), np.zeros(8), 1e-12, training=False).shape
    (4, 8)
    """
    x = ops.convert_to_tensor(x)
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
