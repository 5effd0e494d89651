"""`BertAdamW`'s update on TensorFlow as one fused kernel, `ResourceApplyAdam`.

Written with `keras.ops`, Adam's update is about a dozen element-wise passes
over every parameter and its two moments, each a separate TensorFlow kernel
outside XLA (the default on CPUs). `tf.raw_ops.ResourceApplyAdam` does the
same arithmetic in one pass (it has an XLA kernel too, for GPUs and TPUs). It
adds epsilon before the bias correction, as Keras' Adam does; given
`epsilon * sqrt(1 - beta_2 ** t)` it computes PyTorch's update exactly:

    lr / c1 * m / (sqrt(v) / sqrt(c2) + epsilon)
        == lr * sqrt(c2) / c1 * m / (sqrt(v) + epsilon * sqrt(c2))

with c1 = 1 - beta_1 ** t and c2 = 1 - beta_2 ** t.
"""

import keras


def fused_adam_update(optimizer, gradient, variable, learning_rate, m, v) -> None:
    """Applies one AdamW moment update and step to the `tf.Variable` `variable`
    (decoupled weight decay is applied by Keras before this, as for any AdamW).

    `m`, `v`: the optimizer's moment variables for `variable`.

    Example:
    >>> fused_adam_update(optimizer, gradient, variable, learning_rate, *adam_moments(optimizer, variable))
    """
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
