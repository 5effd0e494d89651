"""`Float32AccumulatingDense` is a Keras `Dense`: the same weights, dtype and
values (in bfloat16 within rounding), and Keras' own call once quantized.
Its product, `dense_product`, is tested in tests/ops/dense_product_test.py."""

import keras
import numpy as np
import pytest

from keras_bert3.layers.float32_accumulating_dense import Float32AccumulatingDense

BFLOAT16_STEP = 2.0**-8  # bfloat16 keeps 8 significant bits.
X = np.random.default_rng(0).normal(size=(3, 5, 16)).astype("float32")


@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
def test_the_layer_is_a_keras_dense_with_the_same_weights(policy):
    ours = Float32AccumulatingDense(24, activation="gelu", dtype=policy)
    keras_dense = keras.layers.Dense(24, activation="gelu", dtype=policy)
    ours.build(X.shape)
    keras_dense.build(X.shape)
    keras_dense.set_weights(ours.get_weights())
    expected = keras.ops.convert_to_numpy(keras.ops.cast(keras_dense(X), "float32"))
    actual = keras.ops.convert_to_numpy(keras.ops.cast(ours(X), "float32"))
    assert ours(X).dtype == keras_dense(X).dtype == ours.compute_dtype
    if policy == "float32":
        np.testing.assert_array_equal(actual, expected)
    else:  # Keras rounds the product to bfloat16 before the bias; ours after.
        np.testing.assert_allclose(actual, expected, atol=4 * BFLOAT16_STEP * np.abs(expected).max(), rtol=0)


def test_a_quantized_layer_keeps_keras_call():
    ours, keras_dense = Float32AccumulatingDense(24), keras.layers.Dense(24)
    ours.build(X.shape)
    keras_dense.build(X.shape)
    keras_dense.set_weights(ours.get_weights())
    ours.quantize("int8")
    keras_dense.quantize("int8")
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(ours(X)), keras.ops.convert_to_numpy(keras_dense(X)))
