"""`dropout` drops as `dropout_reference` (Keras' dropout) does: the keep rate
within the binomial spread, kept values scaled as Keras scales them (where
both keep an element, the same value), masks that are new at every call and
show no pattern across positions, the same masks for the same seed, and a
gradient through the same mask; in bfloat16 the keep rate asked for (Keras'
TensorFlow dropout keeps 115/128 there); under XLA on TensorFlow (its GPU
and TPU default) the same masks as in graph mode."""

import keras
import numpy as np
import pytest

from keras_bert3.ops.dropout import dropout
from keras_bert3.ops.dropout import dropout_reference
from tests.ops.gradients import value_and_gradients

SHAPE = (16, 4, 128, 128)  # An attention-probabilities tensor: 1M elements.

pytestmark = pytest.mark.cpu_numerics  # Kernels against references: tests/cpu_kind_test.py.


def kept(x, rate, seed):
    return keras.ops.convert_to_numpy(dropout(x, rate, seed=seed)) != 0


def binomial_bound(p, n, sigmas=5.0):
    return sigmas * np.sqrt(p * (1 - p) / n)


@pytest.mark.parametrize("rate", [0.1, 0.5])
def test_keep_rate_and_scaling_match_the_reference(rate):
    x = np.random.default_rng(0).uniform(0.5, 1.5, SHAPE).astype("float32")
    ours = keras.ops.convert_to_numpy(dropout(x, rate, seed=keras.random.SeedGenerator(1)))
    theirs = keras.ops.convert_to_numpy(dropout_reference(x, rate, seed=keras.random.SeedGenerator(1)))
    for mask in (ours != 0, theirs != 0):
        assert abs(mask.mean() - (1 - rate)) < binomial_bound(1 - rate, mask.size)
    both = (ours != 0) & (theirs != 0)
    assert both.mean() > (1 - rate) ** 2 / 2
    np.testing.assert_allclose(ours[both], theirs[both], rtol=1e-6)  # The reference's scaling.
    scaled = keras.ops.convert_to_numpy(keras.ops.convert_to_tensor(x) / (1.0 - rate))[ours != 0]
    np.testing.assert_allclose(ours[ours != 0], scaled, rtol=1e-6)  # `inputs / keep_prob`, as Keras scales.


def test_bfloat16_keeps_the_rate_asked_for():
    rate, x = 0.1, keras.ops.ones((64,) + SHAPE[1:], "bfloat16")  # 4.2M elements: 5 sigmas = 0.00073.
    mask = kept(x, rate, keras.random.SeedGenerator(2))
    assert abs(mask.mean() - (1 - rate)) < binomial_bound(1 - rate, mask.size), mask.mean()


def test_masks_are_new_at_every_call_and_patternless():
    rate, x = 0.1, np.ones(SHAPE, "float32")
    seed = keras.random.SeedGenerator(3)
    first, second = kept(x, rate, seed), kept(x, rate, seed)
    n, keep = first.size, 1 - rate
    # Two calls agree where two independent masks would: keep**2 + rate**2.
    agree = np.mean(first == second)
    assert abs(agree - (keep**2 + rate**2)) < binomial_bound(keep**2 + rate**2, n)
    # Along every axis, neighbours are uncorrelated (a counter hashed badly shows stripes).
    centred = first.astype("float64") - first.mean()
    for axis in range(first.ndim):
        a = np.take(centred, np.arange(first.shape[axis] - 1), axis=axis)
        b = np.take(centred, np.arange(1, first.shape[axis]), axis=axis)
        correlation = np.mean(a * b) / centred.var()
        assert abs(correlation) < 5 / np.sqrt(a.size), (axis, correlation)
    # Every column (last-axis position) and every row keep about the same share.
    columns = first.reshape(-1, SHAPE[-1]).mean(axis=0)
    assert np.abs(columns - keep).max() < binomial_bound(keep, n // SHAPE[-1])
    rows = first.reshape(-1, SHAPE[-1]).mean(axis=1)
    assert abs(rows.std() - np.sqrt(keep * rate / SHAPE[-1])) < 0.1 * np.sqrt(keep * rate / SHAPE[-1])


def test_the_same_seed_gives_the_same_masks_and_keeps_the_dtype():
    x = keras.ops.ones((4, 64, 32), "bfloat16")
    a, b, c = (dropout(x, 0.3, seed=keras.random.SeedGenerator(seed)) for seed in (7, 7, 8))
    mask_a, mask_b, mask_c = (keras.ops.convert_to_numpy(keras.ops.cast(m, "float32")) != 0 for m in (a, b, c))
    np.testing.assert_array_equal(mask_a, mask_b)
    assert np.mean(mask_a != mask_c) > 0.2
    assert keras.ops.convert_to_tensor(a).dtype == "bfloat16"


def test_the_gradient_flows_through_the_same_mask():
    x = np.random.default_rng(1).normal(size=(8, 32, 16)).astype("float32")
    # A new generator at every call: the same mask in each of value_and_gradients' calls.
    value, (grad,) = value_and_gradients(lambda x: dropout(x, 0.2, seed=keras.random.SeedGenerator(5)), x)
    mask = (value != 0).astype("float32")
    assert 0.7 < mask.mean() < 0.9
    expected_value, (expected_grad,) = value_and_gradients(lambda x: x * mask / 0.8, x)
    np.testing.assert_allclose(value, expected_value, rtol=1e-6)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-6)


@pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="TensorFlow's XLA")
def test_xla_draws_the_masks_of_graph_mode():
    import tensorflow as tf

    x = tf.ones((4, 64, 33))  # An odd number of elements: the last word's second half unused.
    masks = []
    for jit_compile in (False, True):
        seed = keras.random.SeedGenerator(9)
        masks.append(tf.function(lambda x: dropout(x, 0.1, seed=seed), jit_compile=jit_compile)(x).numpy() != 0)
    np.testing.assert_array_equal(masks[0], masks[1])
