"""`fused_attention` (JAX's fused attention; XLA's on a CPU, cuDNN's on a GPU)
gives the values and gradients of the encoder block's own attention
(`attention_reference`) within 1e-5 in float32, with right padding and with
packed rows, and keeps a packed row's pairs apart. The fused kernel is JAX's:
on TensorFlow the encoder block never calls it (its tests run the reference
there). With dropout it runs only in cuDNN (a GPU): here it is refused, and
`bench/gpu_pretraining_step.py`'s `check-fused` row checks it on a GPU."""

import keras
import numpy as np
import pytest

from keras_bert3.layers.packed_sequences import packed_attention_mask
from keras_bert3.ops.fused_attention import attention_reference
from keras_bert3.ops.fused_attention import fused_attention
from keras_bert3.ops.fused_attention import fused_attention_available
from tests.ops.gradients import value_and_gradients

BATCH, LENGTH, HEADS, HEAD_DIM = 3, 16, 4, 8
PAIR_IDS = np.array([[1] * 5 + [2] * 7 + [0] * 4, [1] * 16, [1, 1, 2, 2, 3, 3, 3] + [0] * 9])

pytestmark = pytest.mark.cpu_numerics  # Kernels against references: tests/cpu_kind_test.py.


def qkv(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(BATCH, LENGTH, HEADS, HEAD_DIM)).astype("float32") for _ in range(3)]


def right_padding():
    lengths = np.array([LENGTH, 9, 1])
    return (np.arange(LENGTH)[None] < lengths[:, None]).astype("int32")


def packed_rows():
    return keras.ops.convert_to_numpy(packed_attention_mask(PAIR_IDS))


requires_fused = pytest.mark.skipif(not fused_attention_available(), reason="the fused kernel is JAX's")


@pytest.mark.slow
@requires_fused
@pytest.mark.parametrize("layout", ["right padding", "packed rows"])
def test_values_and_gradients_are_the_reference_ones(layout):
    allowed = right_padding() if layout == "right padding" else packed_rows()
    # Packed rows' padding queries see no key: their outputs are read by no loss, so neither test reads them.
    read = allowed.any(-1) if allowed.ndim == 3 else np.ones((BATCH, LENGTH), bool)

    def only_read_rows(function):
        return lambda q, k, v: function(q, k, v, allowed) * read[:, :, None, None].astype("float32")

    value, grads = value_and_gradients(only_read_rows(fused_attention), *qkv())
    expected_value, expected_grads = value_and_gradients(only_read_rows(attention_reference), *qkv())
    assert value.shape == (BATCH, LENGTH, HEADS, HEAD_DIM)
    np.testing.assert_allclose(value, expected_value, atol=1e-5, rtol=0)
    for ours, reference in zip(grads, expected_grads):
        assert np.abs(reference).max() > 0.1
        np.testing.assert_allclose(ours, reference, atol=1e-5, rtol=0)


@requires_fused
def test_padding_keys_change_nothing():
    q, k, v = qkv()
    padding = right_padding()
    noisy = [np.where(padding[:, :, None, None] > 0, t, 100.0).astype("float32") for t in (k, v)]
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(fused_attention(q, *noisy, padding)),
        keras.ops.convert_to_numpy(fused_attention(q, k, v, padding)),
        atol=1e-6,
        rtol=0,
    )


@requires_fused
def test_a_packed_pair_sees_only_itself():
    """Rewriting every other pair of a row changes nothing in a pair's outputs."""
    q, k, v = qkv()
    allowed = packed_rows()
    before = keras.ops.convert_to_numpy(fused_attention(q, k, v, allowed))
    first_pair = (PAIR_IDS == 1)[:, :, None, None]
    rewritten = [
        np.where(first_pair, t, np.random.default_rng(5).normal(size=t.shape)).astype("float32") for t in (q, k, v)
    ]
    after = keras.ops.convert_to_numpy(fused_attention(*rewritten, allowed))
    np.testing.assert_allclose(after[PAIR_IDS == 1], before[PAIR_IDS == 1], atol=1e-6, rtol=0)
    assert np.abs(after[PAIR_IDS == 2] - before[PAIR_IDS == 2]).max() > 0.1  # The rewritten pairs did change.


@requires_fused
def test_dropout_needs_cudnn():
    """On a CPU (XLA's attention, which has no dropout) the fused kernel says
    it cannot drop probabilities, and refuses to be called with a rate."""
    assert fused_attention_available(0.0, "bfloat16", HEAD_DIM)
    assert not fused_attention_available(0.1, "bfloat16", HEAD_DIM)
    with pytest.raises(ValueError, match="dropout_rate=0.1 needs cuDNN"):
        fused_attention(*qkv(), right_padding(), dropout_rate=0.1, seed=3)


def test_split_token_major_still_splits_with_a_warning():
    """Removed from the encoder block on 2026-11-28; the old name works for a
    release, warning with its replacement, `keras.ops.unstack(qkv, 3, axis=2)`."""
    from keras_bert3.ops.fused_attention import split_token_major

    packed_qkv = np.random.default_rng(2).normal(size=(2, 5, 3, 4, 8)).astype("float32")
    with pytest.warns(DeprecationWarning, match=r"keras.ops.unstack\(qkv, 3, axis=2\)"):
        parts = split_token_major(packed_qkv)
    for part, index in zip(parts, range(3)):
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(part), packed_qkv[:, :, index])
