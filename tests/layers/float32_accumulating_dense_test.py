"""`dense_product` and `Float32AccumulatingDense`: in bfloat16, the values and
all three gradients of `x @ kernel + bias` computed in float32 and rounded
once; in float32, exactly Keras' `Dense`."""

import keras
import numpy as np
import pytest

from keras_bert3.layers.float32_accumulating_dense import Float32AccumulatingDense
from keras_bert3.layers.float32_accumulating_dense import dense_product

BFLOAT16_STEP = 2.0**-8  # bfloat16 keeps 8 significant bits.


def value_and_gradients(function, *args):
    """`function(*args)` and the gradients of `sum(function(*args) * weights)`
    with respect to every arg, on the running backend; numpy in and out."""
    weights = np.random.default_rng(9).normal(size=np.shape(function(*args))).astype("float32")
    if keras.backend.backend() == "jax":
        import jax

        def loss(*a):
            return (function(*a).astype("float32") * weights).sum()

        value = function(*args)
        grads = jax.grad(loss, argnums=tuple(range(len(args))))(*args)
    else:
        import tensorflow as tf

        args = [tf.convert_to_tensor(a) for a in args]
        with tf.GradientTape() as tape:
            tape.watch(args)
            value = function(*args)
            loss = tf.reduce_sum(tf.cast(value, "float32") * weights)
        grads = tape.gradient(loss, args)
    as_float = lambda t: np.asarray(keras.ops.convert_to_numpy(keras.ops.cast(t, "float32")))  # noqa: E731
    return as_float(value), [as_float(g) for g in grads]


def operands(seed=0, transpose_kernel=False):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(3, 5, 16)).astype("float32")
    kernel = rng.normal(size=(24, 16) if transpose_kernel else (16, 24)).astype("float32") / 4
    bias = rng.normal(size=(24,)).astype("float32")
    return x, kernel, bias


@pytest.mark.parametrize("transpose_kernel", [False, True])
def test_bfloat16_values_and_gradients_are_the_float32_ones_rounded(transpose_kernel):
    x, kernel, bias = operands(transpose_kernel=transpose_kernel)
    as_bfloat16 = [keras.ops.cast(a, "bfloat16") for a in (x, kernel, bias)]
    # The reference: the same bfloat16 operands, every product in float32.
    exact = [np.asarray(keras.ops.convert_to_numpy(keras.ops.cast(a, "float32"))) for a in as_bfloat16]
    product = lambda x, k, b: dense_product(x, k, b, transpose_kernel=transpose_kernel)  # noqa: E731
    value, grads = value_and_gradients(product, *as_bfloat16)
    expected_value, expected_grads = value_and_gradients(product, *exact)
    for ours, theirs in zip([value] + grads, [expected_value] + expected_grads):
        scale = np.abs(theirs).max()
        np.testing.assert_allclose(ours, theirs, atol=2 * BFLOAT16_STEP * scale, rtol=0)
    assert keras.ops.convert_to_tensor(product(*as_bfloat16)).dtype == "bfloat16"


def test_the_transposed_kernel_gives_the_same_product():
    x, kernel, bias = operands()
    straight = dense_product(x, kernel, bias)
    transposed = dense_product(x, np.ascontiguousarray(kernel.T), bias, transpose_kernel=True)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(transposed), keras.ops.convert_to_numpy(straight), atol=1e-5)


@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
def test_the_layer_is_a_keras_dense_with_the_same_weights(policy):
    x, _, _ = operands()
    ours = Float32AccumulatingDense(24, activation="gelu", dtype=policy)
    keras_dense = keras.layers.Dense(24, activation="gelu", dtype=policy)
    ours.build(x.shape)
    keras_dense.build(x.shape)
    keras_dense.set_weights(ours.get_weights())
    expected = keras.ops.convert_to_numpy(keras.ops.cast(keras_dense(x), "float32"))
    actual = keras.ops.convert_to_numpy(keras.ops.cast(ours(x), "float32"))
    assert ours(x).dtype == keras_dense(x).dtype == ours.compute_dtype
    if policy == "float32":
        np.testing.assert_array_equal(actual, expected)
    else:  # Keras rounds the product to bfloat16 before the bias; ours after.
        np.testing.assert_allclose(actual, expected, atol=4 * BFLOAT16_STEP * np.abs(expected).max(), rtol=0)


def test_a_quantized_layer_keeps_keras_call():
    x, _, _ = operands()
    ours, keras_dense = Float32AccumulatingDense(24), keras.layers.Dense(24)
    ours.build(x.shape)
    keras_dense.build(x.shape)
    keras_dense.set_weights(ours.get_weights())
    ours.quantize("int8")
    keras_dense.quantize("int8")
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(ours(x)), keras.ops.convert_to_numpy(keras_dense(x)))
