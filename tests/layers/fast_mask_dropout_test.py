"""`FastMaskDropout` drops like `keras.layers.Dropout`: the keep rate within the
binomial spread, kept values scaled as Keras scales them, masks that are new
at every call and show no pattern across positions, the same masks for the
same seed, and a gradient through the same mask; in bfloat16 the keep rate
asked for (Keras' TensorFlow dropout keeps 115/128 there); under XLA on
TensorFlow (its GPU and TPU default) the same masks as in graph mode."""

import keras
import numpy as np
import pytest

from keras_bert3.layers.fast_mask_dropout import FastMaskDropout

SHAPE = (16, 4, 128, 128)  # An attention-probabilities tensor: 1M elements.


def kept(layer, x):
    return keras.ops.convert_to_numpy(layer(x, training=True)) != 0


def binomial_bound(p, n, sigmas=5.0):
    return sigmas * np.sqrt(p * (1 - p) / n)


@pytest.mark.parametrize("rate", [0.1, 0.5])
def test_keep_rate_and_scaling_match_keras_dropout(rate):
    x = np.random.default_rng(0).uniform(0.5, 1.5, SHAPE).astype("float32")
    ours, theirs = FastMaskDropout(rate, seed=1), keras.layers.Dropout(rate, seed=1)
    ours_out = keras.ops.convert_to_numpy(ours(x, training=True))
    theirs_kept = kept(theirs, x)
    for mask in (ours_out != 0, theirs_kept):
        assert abs(mask.mean() - (1 - rate)) < binomial_bound(1 - rate, mask.size)
    kept_values = ours_out[ours_out != 0]
    scaled = keras.ops.convert_to_numpy(keras.ops.convert_to_tensor(x) / (1.0 - rate))[ours_out != 0]
    np.testing.assert_allclose(kept_values, scaled, rtol=1e-6)  # `inputs / keep_prob`, as Keras scales.


def test_bfloat16_keeps_the_rate_asked_for():
    rate, x = 0.1, keras.ops.ones((64,) + SHAPE[1:], "bfloat16")  # 4.2M elements: 5 sigmas = 0.00073.
    mask = kept(FastMaskDropout(rate, seed=2, dtype="bfloat16"), x)
    assert abs(mask.mean() - (1 - rate)) < binomial_bound(1 - rate, mask.size), mask.mean()


def test_masks_are_new_at_every_call_and_patternless():
    rate, x = 0.1, np.ones(SHAPE, "float32")
    layer = FastMaskDropout(rate, seed=3)
    first, second = kept(layer, x), kept(layer, x)
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


def test_the_same_seed_gives_the_same_masks_and_inference_keeps_everything():
    x = keras.ops.ones((4, 64, 32), "bfloat16")
    a, b, c = (FastMaskDropout(0.3, seed=seed, dtype="bfloat16") for seed in (7, 7, 8))
    mask_a, mask_b, mask_c = kept(a, x), kept(b, x), kept(c, x)
    np.testing.assert_array_equal(mask_a, mask_b)
    assert np.mean(mask_a != mask_c) > 0.2
    assert keras.ops.convert_to_tensor(a(x, training=True)).dtype == "bfloat16"
    assert (keras.ops.convert_to_numpy(keras.ops.cast(a(x, training=False), "float32")) == 1).all()


def test_the_gradient_flows_through_the_same_mask():
    layer = FastMaskDropout(0.2, seed=5)
    x = np.random.default_rng(1).normal(size=(8, 32, 16)).astype("float32")
    weights = np.random.default_rng(2).normal(size=x.shape).astype("float32")
    layer.build(x.shape)
    if keras.backend.backend() == "jax":
        import jax

        state = [v.value for v in layer.non_trainable_variables]

        def loss(x):
            out, _ = layer.stateless_call([], state, x, training=True)
            return (out * weights).sum(), out

        grad, out = jax.grad(loss, has_aux=True)(x)
    else:
        import tensorflow as tf

        x = tf.constant(x)
        with tf.GradientTape() as tape:
            tape.watch(x)
            out = layer(x, training=True)
            loss = tf.reduce_sum(out * weights)
        grad = tape.gradient(loss, x)
    np.testing.assert_allclose(np.asarray(grad), (np.asarray(out) != 0) * weights / 0.8, rtol=1e-6)


@pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="TensorFlow's XLA")
def test_xla_draws_the_masks_of_graph_mode():
    import tensorflow as tf

    x = tf.ones((4, 64, 33))  # An odd number of elements: the last word's second half unused.
    masks = []
    for jit_compile in (False, True):
        layer = FastMaskDropout(0.1, seed=9)
        masks.append(tf.function(lambda x: layer(x, training=True), jit_compile=jit_compile)(x).numpy() != 0)
    np.testing.assert_array_equal(masks[0], masks[1])
