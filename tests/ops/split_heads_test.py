"""`split_heads` gives the values and the gradient of `split_heads_reference`
(the plain transpose-and-unstack), exactly, in float32 and bfloat16 (on JAX
through its custom gradient)."""

import keras
import numpy as np
import pytest

from keras_bert3.ops.split_heads import split_heads
from keras_bert3.ops.split_heads import split_heads_reference
from tests.ops.gradients import value_and_gradients

pytestmark = pytest.mark.cpu_numerics  # Kernels against references: tests/cpu_kind_test.py.


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_values_and_gradient_are_the_reference_ones(dtype):
    qkv = keras.ops.cast(np.random.default_rng(0).normal(size=(2, 5, 3, 4, 8)), dtype)
    value, (grad,) = value_and_gradients(split_heads, qkv)
    expected_value, (expected_grad,) = value_and_gradients(split_heads_reference, qkv)
    assert len(value) == len(expected_value) == 3
    for ours, plain in zip(value, expected_value):
        assert ours.shape == (2, 4, 5, 8)
        np.testing.assert_array_equal(ours, plain)
    assert np.abs(grad).max() > 0
    np.testing.assert_array_equal(grad, expected_grad)


@pytest.mark.skipif(keras.backend.backend() != "jax", reason="the custom gradient is JAX's")
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_the_gradient_keeps_the_dtype_of_autodiff(dtype):
    import jax
    import jax.numpy as jnp

    qkv = jnp.asarray(np.random.default_rng(1).normal(size=(2, 5, 3, 4, 8)), dtype)

    def loss(split):
        return lambda x: sum(part.astype("float32").sum() for part in split(x))

    assert jax.grad(loss(split_heads))(qkv).dtype == jax.grad(loss(split_heads_reference))(qkv).dtype == dtype
