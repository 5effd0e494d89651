"""LayerNorm over the last axis at inference on TensorFlow, in the form that
TensorFlow's oneDNN graph rewrite turns into one `_MklLayerNorm` kernel.

Keras' LayerNorm is some ten TensorFlow ops (two means, a squared
difference, rsqrt, products and sums), plus four casts in bfloat16, and a
served model pays TensorFlow's per-op dispatch for each. The form here is
the one Keras 2 wrote: the rows reshaped to one NCHW image with a channel
per row, `FusedBatchNormV3` in training mode (so it normalizes each channel
by its own mean and variance), then gamma and beta. On x86 TensorFlow
builds (oneDNN on) the graph rewrite fuses that into a single kernel that
reads bfloat16 and computes in float32; elsewhere `FusedBatchNormV3` runs as
it is. Both are core TensorFlow ops, so a SavedModel holding them serves in
TF Serving. Where TensorFlow sees a GPU or TPU the reference runs instead:
this form is for the CPU kernels, and was neither tested nor measured on
an accelerator's batch norm.
"""

import keras
from keras import ops

from keras_bert3.distribution.devices import accelerator_type


def layer_norm(x, gamma, beta, epsilon, *, training):
    """LayerNorm of `x` (rank 2 or 3) over its last axis, scaled by `gamma`
    and shifted by `beta`, in `x`'s dtype: the values of
    `layer_norm_reference`, as one fused kernel on TensorFlow on CPUs when
    not training; the reference itself on other backends, on accelerators
    and when training (the fused form's gradient is untested, and a training
    step's large batches do not pay per-op dispatch the way one served
    string does).

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
    """Keras' LayerNorm over the last axis (computed in at least float32),
    in `x`'s dtype.

    Example:
    >>> layer_norm_reference(np.ones((4, 8), "float32"), np.ones(8), np.zeros(8), 1e-12).shape
    (4, 8)
    """
    x = ops.convert_to_tensor(x)
    return ops.cast(ops.layer_normalization(x, gamma, beta, axis=-1, epsilon=epsilon), x.dtype)
