"""AdamW's step with epsilon added to the bias-corrected second moment, as `torch.optim.AdamW`
does; on TensorFlow as one fused kernel, `ResourceApplyAdam`, instead of a dozen element-wise ones.
That kernel adds epsilon before the bias correction; given `epsilon * sqrt(c2)` it computes
PyTorch's update exactly (c1 = 1 - beta_1 ** t, c2 = 1 - beta_2 ** t):

    lr / c1 * m / (sqrt(v) / sqrt(c2) + epsilon) == lr * sqrt(c2) / c1 * m / (sqrt(v) + epsilon * sqrt(c2))
"""

import keras
from keras import ops


def adam_update(optimizer: keras.optimizers.Adam, gradient, variable, learning_rate, m, v) -> None:
    """Applies one Adam step to `variable` and its moments `m`, `v` with the optimizer's settings and
    step (`iterations + 1`), as `adam_update_reference`. Keras applies AdamW's weight decay before.

    Example:
    >>> adam_update(optimizer, gradient, variable, learning_rate, *adam_moments(optimizer, variable))
    """
    if keras.backend.backend() == "tensorflow":
        return _fused_adam_update(optimizer, gradient, variable, learning_rate, m, v)
    return adam_update_reference(optimizer, gradient, variable, learning_rate, m, v)


def adam_update_reference(optimizer: keras.optimizers.Adam, gradient, variable, learning_rate, m, v) -> None:
    """`adam_update` with `keras.ops` only.

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
    """`adam_update` on TensorFlow."""
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
    """The `tf.Variable` behind a Keras variable."""
    return variable.value if isinstance(variable, keras.Variable) else variable
