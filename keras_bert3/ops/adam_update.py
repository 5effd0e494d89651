"""AdamW's step with epsilon added to the bias-corrected second moment, as
`torch.optim.AdamW` does; on TensorFlow as one fused kernel, `ResourceApplyAdam`.

Written with `keras.ops` (`adam_update_reference`), Adam's update is about a
dozen element-wise passes over every parameter and its two moments, each a
separate TensorFlow kernel outside XLA (the default on CPUs).
`tf.raw_ops.ResourceApplyAdam` does the same arithmetic in one pass (it has
an XLA kernel too, for GPUs and TPUs). It adds epsilon before the bias
correction, as Keras' Adam does; given `epsilon * sqrt(1 - beta_2 ** t)` it
computes PyTorch's update exactly:

    lr / c1 * m / (sqrt(v) / sqrt(c2) + epsilon)
        == lr * sqrt(c2) / c1 * m / (sqrt(v) + epsilon * sqrt(c2))

with c1 = 1 - beta_1 ** t and c2 = 1 - beta_2 ** t.
"""

import keras
from keras import ops


def adam_update(optimizer: keras.optimizers.Adam, gradient, variable, learning_rate, m, v) -> None:
    """Applies one Adam moment update and step to `variable`, with the
    optimizer's `beta_1`, `beta_2`, `epsilon` and step (`iterations + 1`):
    the arithmetic of `adam_update_reference`, on TensorFlow in one kernel.
    An AdamW's decoupled weight decay is applied by Keras before this.

    `m`, `v`: the optimizer's moment variables for `variable` (same shape).

    Example:
    >>> adam_update(optimizer, gradient, variable, learning_rate, *adam_moments(optimizer, variable))
    """
    if keras.backend.backend() == "tensorflow":
        return _fused_adam_update(optimizer, gradient, variable, learning_rate, m, v)
    return adam_update_reference(optimizer, gradient, variable, learning_rate, m, v)


def adam_update_reference(optimizer: keras.optimizers.Adam, gradient, variable, learning_rate, m, v) -> None:
    """`adam_update` with `keras.ops` only:

        m += (g - m) * (1 - beta_1)
        v += (g**2 - v) * (1 - beta_2)
        variable -= lr / c1 * m / (sqrt(v / c2) + epsilon)

    Example:
    >>> adam_update_reference(optimizer, gradient, variable, learning_rate, *adam_moments(optimizer, variable))
    """
    lr = ops.cast(learning_rate, variable.dtype)
    gradient = ops.cast(gradient, variable.dtype)
    step = ops.cast(optimizer.iterations + 1, variable.dtype)
    first_correction = 1 - ops.power(ops.cast(optimizer.beta_1, variable.dtype), step)
    second_correction = 1 - ops.power(ops.cast(optimizer.beta_2, variable.dtype), step)
    optimizer.assign_add(m, ops.multiply(ops.subtract(gradient, m), 1 - optimizer.beta_1))
    optimizer.assign_add(v, ops.multiply(ops.subtract(ops.square(gradient), v), 1 - optimizer.beta_2))
    denominator = ops.add(ops.sqrt(ops.divide(v, second_correction)), optimizer.epsilon)
    optimizer.assign_sub(variable, ops.divide(ops.multiply(m, lr / first_correction), denominator))


def _fused_adam_update(optimizer, gradient, variable, learning_rate, m, v) -> None:
    """`adam_update` on TensorFlow: `ResourceApplyAdam` on the `tf.Variable`s."""
    import tensorflow as tf

    dtype = variable.dtype
    step = tf.cast(optimizer.iterations + 1, dtype)
    beta_1_power = tf.pow(tf.cast(optimizer.beta_1, dtype), step)
    beta_2_power = tf.pow(tf.cast(optimizer.beta_2, dtype), step)
    tf.raw_ops.ResourceApplyAdam(
        var=_tf_variable(variable).handle,
        m=_tf_variable(m).handle,
        v=_tf_variable(v).handle,
        beta1_power=beta_1_power,
        beta2_power=beta_2_power,
        lr=tf.cast(learning_rate, dtype),
        beta1=tf.cast(optimizer.beta_1, dtype),
        beta2=tf.cast(optimizer.beta_2, dtype),
        epsilon=tf.cast(optimizer.epsilon, dtype) * tf.sqrt(1 - beta_2_power),
        grad=tf.cast(tf.convert_to_tensor(gradient), dtype),
    )


def _tf_variable(variable):
    """The `tf.Variable` behind a Keras variable (what Keras' TensorFlow optimizer assigns to)."""
    return variable.value if isinstance(variable, keras.Variable) else variable
