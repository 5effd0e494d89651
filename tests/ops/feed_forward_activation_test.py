"""`feed_forward_activation` is `feed_forward_activation_reference`'s
`activation_fn(x)`: exactly in float32 and at inference; when training in
bfloat16, within bfloat16 rounding of it (and the float32 value rounded
once), in the input's dtype, with the same gradient within rounding."""

import keras
import numpy as np
import pytest

from keras_bert3.layers.activations import get_activation
from keras_bert3.ops.feed_forward_activation import feed_forward_activation
from keras_bert3.ops.feed_forward_activation import feed_forward_activation_reference
from tests.ops.gradients import as_float32
from tests.ops.gradients import value_and_gradients

BFLOAT16_STEP = 2.0**-8  # bfloat16 keeps 8 significant bits.
ACTIVATIONS = ["gelu", "gelu_approximate", "relu"]

pytestmark = pytest.mark.cpu_numerics  # Kernels against references: tests/cpu_kind_test.py.


def inputs(dtype):
    return keras.ops.cast(np.random.default_rng(0).normal(size=(6, 32)) * 3, dtype)


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("training", [False, True])
def test_float32_is_the_reference_exactly(activation, training):
    activation_fn, x = get_activation(activation), inputs("float32")
    ours = feed_forward_activation(activation_fn, x, training=training)
    np.testing.assert_array_equal(as_float32(ours), as_float32(feed_forward_activation_reference(activation_fn, x)))


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_bfloat16_inference_is_the_reference_exactly(activation):
    activation_fn, x = get_activation(activation), inputs("bfloat16")
    ours = feed_forward_activation(activation_fn, x, training=False)
    np.testing.assert_array_equal(as_float32(ours), as_float32(feed_forward_activation_reference(activation_fn, x)))


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_bfloat16_training_is_the_reference_within_rounding(activation):
    activation_fn, x = get_activation(activation), inputs("bfloat16")
    train = lambda x: feed_forward_activation(activation_fn, x, training=True)  # noqa: E731
    value, (grad,) = value_and_gradients(train, x)
    expected_value, (expected_grad,) = value_and_gradients(
        lambda x: feed_forward_activation_reference(activation_fn, x), x
    )
    assert keras.ops.convert_to_tensor(train(x)).dtype == "bfloat16"
    # Rounded once from float32: within half a bfloat16 spacing (at most 2**-8 of it) of the float32 value.
    exact = as_float32(activation_fn(keras.ops.cast(x, "float32")))
    np.testing.assert_allclose(value, exact, rtol=BFLOAT16_STEP, atol=1e-30)
    np.testing.assert_allclose(value, expected_value, rtol=2 * BFLOAT16_STEP, atol=2 * BFLOAT16_STEP)
    np.testing.assert_allclose(grad, expected_grad, rtol=0, atol=4 * BFLOAT16_STEP * np.abs(expected_grad).max())


@pytest.mark.skipif(keras.backend.backend() != "jax", reason="the gradient that keeps the bfloat16 input is JAX's")
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_jax_gradient_is_that_of_the_float32_computation_exactly(activation):
    """The custom gradient computes what JAX's own differentiation of
    `cast(activation(cast(x, float32)), bfloat16)` computes, bit for bit."""
    activation_fn, x = get_activation(activation), inputs("bfloat16")
    by_autodiff = lambda x: keras.ops.cast(activation_fn(keras.ops.cast(x, "float32")), x.dtype)  # noqa: E731
    value, (grad,) = value_and_gradients(lambda x: feed_forward_activation(activation_fn, x, training=True), x)
    expected_value, (expected_grad,) = value_and_gradients(by_autodiff, x)
    np.testing.assert_array_equal(value, expected_value)
    assert np.abs(grad).max() > 0
    np.testing.assert_array_equal(grad, expected_grad)
