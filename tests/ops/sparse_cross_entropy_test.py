"""`sparse_cross_entropy_with_hits` and its JAX formulation,
`gathered_cross_entropy_with_hits`, give the loss, hits and gradient of
`sparse_cross_entropy_with_hits_reference` (Keras' cross-entropy and
`argmax`): float32 to 1e-6, bfloat16 within its rounding."""

import keras
import numpy as np
import pytest

from keras_bert3.ops.sparse_cross_entropy import gathered_cross_entropy_with_hits
from keras_bert3.ops.sparse_cross_entropy import sparse_cross_entropy_with_hits
from keras_bert3.ops.sparse_cross_entropy import sparse_cross_entropy_with_hits_reference
from tests.ops.gradients import as_float32
from tests.ops.gradients import value_and_gradients

FAST = [sparse_cross_entropy_with_hits, gathered_cross_entropy_with_hits]

pytestmark = pytest.mark.cpu_numerics  # Kernels against references: tests/cpu_kind_test.py.


def labels_and_logits(seed=0, shape=(4, 7), classes=300):
    """Logits with one clear maximum a row (no ties, even in bfloat16), and
    labels that are the maximum in about half the rows."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=shape + (classes,)).astype("float32") * 3
    top = rng.integers(0, classes, shape)
    np.put_along_axis(logits, top[..., None], logits.max(axis=-1, keepdims=True) + 1.0, axis=-1)
    labels = np.where(rng.random(shape) < 0.5, top, rng.integers(0, classes, shape)).astype("int32")
    return labels, logits


@pytest.mark.slow
@pytest.mark.parametrize("fast", FAST)
def test_float32_loss_hits_and_gradient_are_the_reference_ones(fast):
    labels, logits = labels_and_logits()
    loss, hits = (as_float32(t) for t in fast(labels, logits))
    expected_loss, expected_hits = (as_float32(t) for t in sparse_cross_entropy_with_hits_reference(labels, logits))
    assert loss.shape == hits.shape == labels.shape
    np.testing.assert_allclose(loss, expected_loss, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(hits, expected_hits)
    assert 0 < hits.mean() < 1
    _, (grad,) = value_and_gradients(lambda z: fast(labels, z)[0], logits)
    _, (expected_grad,) = value_and_gradients(lambda z: sparse_cross_entropy_with_hits_reference(labels, z)[0], logits)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("fast", FAST)
def test_bfloat16_loss_and_hits_are_the_reference_ones_within_rounding(fast):
    labels, logits = labels_and_logits(seed=1)
    logits = keras.ops.cast(logits, "bfloat16")
    loss, hits = fast(labels, logits)
    expected_loss, expected_hits = sparse_cross_entropy_with_hits_reference(labels, logits)
    assert keras.ops.convert_to_tensor(hits).dtype == "bfloat16"
    # A few bfloat16 steps (8 significant bits) of the largest term, logsumexp.
    logsumexp = as_float32(keras.ops.logsumexp(keras.ops.cast(logits, "float32"), axis=-1))
    np.testing.assert_allclose(as_float32(loss), as_float32(expected_loss), rtol=0, atol=4 * 2.0**-8 * logsumexp.max())
    np.testing.assert_array_equal(as_float32(hits), as_float32(expected_hits))


def test_a_tie_counts_as_a_hit_in_the_gathered_formulation():
    labels, logits = np.array([1]), np.array([[2.0, 2.0, 0.0]], "float32")
    assert float(as_float32(gathered_cross_entropy_with_hits(labels, logits)[1])[0]) == 1.0
    assert float(as_float32(sparse_cross_entropy_with_hits_reference(labels, logits)[1])[0]) == 0.0  # argmax: class 0.
