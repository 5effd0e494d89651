"""`FastMaskDropout` is `keras.layers.Dropout` drawing its masks with
`keras_bert3.ops.dropout`: the keep rate and scaling of Keras' layer, the
masks of `dropout` under the layer's seed, the same masks for the same seed,
everything kept at inference, and Keras' own dropout where the fast masks do
not apply (a `noise_shape`). The masks themselves are tested in
tests/ops/dropout_test.py."""

import keras
import numpy as np
import pytest

from keras_bert3.layers.fast_mask_dropout import FastMaskDropout
from keras_bert3.ops.dropout import dropout

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


def test_the_masks_are_those_of_ops_dropout_under_the_layers_seed():
    x = np.random.default_rng(4).normal(size=(4, 64, 32)).astype("float32")
    ours = keras.ops.convert_to_numpy(FastMaskDropout(0.3, seed=7)(x, training=True))
    expected = keras.ops.convert_to_numpy(dropout(x, 0.3, seed=keras.random.SeedGenerator(7)))
    np.testing.assert_array_equal(ours, expected)


def test_the_same_seed_gives_the_same_masks_and_inference_keeps_everything():
    x = keras.ops.ones((4, 64, 32), "bfloat16")
    a, b, c = (FastMaskDropout(0.3, seed=seed, dtype="bfloat16") for seed in (7, 7, 8))
    mask_a, mask_b, mask_c = kept(a, x), kept(b, x), kept(c, x)
    np.testing.assert_array_equal(mask_a, mask_b)
    assert np.mean(mask_a != mask_c) > 0.2
    assert keras.ops.convert_to_tensor(a(x, training=True)).dtype == "bfloat16"
    assert (keras.ops.convert_to_numpy(keras.ops.cast(a(x, training=False), "float32")) == 1).all()


def test_a_noise_shape_drops_as_keras_dropout():
    x = np.random.default_rng(5).normal(size=(4, 8, 16)).astype("float32")
    ours = FastMaskDropout(0.5, noise_shape=(4, 1, 16), seed=3)(x, training=True)
    theirs = keras.layers.Dropout(0.5, noise_shape=(4, 1, 16), seed=3)(x, training=True)
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(ours), keras.ops.convert_to_numpy(theirs))
    rows = keras.ops.convert_to_numpy(ours) != 0
    assert (rows == rows[:, :1]).all()  # One mask for every position along the noise shape's 1.
