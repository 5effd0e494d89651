"""`masked_softmax` gives `masked_softmax_reference`'s values (the softmax in
float32) in float32 and bfloat16, training or not, for a padding mask and for
a per-query attention mask: masked keys get no weight, each row sums to 1;
float16 keeps the float32 path, where -1e9 cannot overflow. On TensorFlow
with oneDNN, the bfloat16 inference form has no casts of the scores, which
is what it is for, and gives the reference's values exactly."""

import keras
import numpy as np
import pytest

from keras_bert3.distribution.devices import onednn_enabled
from keras_bert3.ops.masked_softmax import masked_softmax
from keras_bert3.ops.masked_softmax import masked_softmax_reference
from tests.ops.gradients import as_float32

BFLOAT16_STEP = 2.0**-8  # bfloat16 keeps 8 significant bits.
BATCH, HEADS, SEQ = 3, 4, 19

pytestmark = pytest.mark.cpu_numerics  # Kernels against references: tests/cpu_kind_test.py.


def scores_and_mask(dtype, per_query, seed=0):
    """Attention scores of a trained model's spread (a few units, some keys far
    ahead), and rows of 19, 11 and 1 real keys; with `per_query`, a
    (batch, 1, queries, keys) mask that also hides each query's next key."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(scale=3, size=(BATCH, HEADS, SEQ, SEQ))
    scores += rng.choice([0, 8], size=(BATCH, HEADS, 1, SEQ), p=[0.9, 0.1])
    lengths = np.array([SEQ, 11, 1])
    allowed = (np.arange(SEQ)[None, :] < lengths[:, None]).astype("int32")[:, None, None, :]
    if per_query:
        allowed = np.broadcast_to(allowed, (BATCH, 1, SEQ, SEQ)).copy()
        queries, keys = np.arange(SEQ - 1), np.arange(1, SEQ)
        allowed[0, 0, queries, keys] = 0
    return keras.ops.cast(scores, dtype), allowed


@pytest.mark.parametrize("per_query", [False, True])
@pytest.mark.parametrize("training", [False, True])
def test_float32_gives_the_reference_values(per_query, training):
    scores, allowed = scores_and_mask("float32", per_query)
    ours = masked_softmax(scores, allowed, training=training)
    assert ours.dtype == scores.dtype
    ours = as_float32(ours)
    np.testing.assert_allclose(ours, as_float32(masked_softmax_reference(scores, allowed)), rtol=0, atol=1e-6)
    assert np.all(ours[np.broadcast_to(allowed, ours.shape) == 0] == 0)
    np.testing.assert_allclose(ours.sum(-1), 1, atol=1e-5)


@pytest.mark.parametrize("per_query", [False, True])
def test_bfloat16_gives_the_reference_values_within_one_rounding(per_query):
    scores, allowed = scores_and_mask("bfloat16", per_query)
    ours = masked_softmax(scores, allowed, training=False)
    assert ours.dtype == scores.dtype
    expected = as_float32(masked_softmax_reference(scores, allowed))
    np.testing.assert_allclose(as_float32(ours), expected, rtol=0, atol=BFLOAT16_STEP)
    assert np.all(as_float32(ours)[np.broadcast_to(allowed, expected.shape) == 0] == 0)
    if keras.backend.backend() == "tensorflow" and onednn_enabled():
        # oneDNN's softmax computes in float32: the same rounding as the reference's cast.
        np.testing.assert_array_equal(as_float32(ours), expected)


@pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="TensorFlow's graph")
def test_the_bfloat16_inference_form_keeps_the_scores_in_bfloat16():
    import tensorflow as tf

    if not onednn_enabled():
        pytest.skip("Without oneDNN the float32 reference runs (TensorFlow's own softmax rounds bfloat16).")
    _, allowed = scores_and_mask("bfloat16", per_query=False)

    def graph_casts(training):
        function = tf.function(lambda scores: masked_softmax(scores, allowed, training=training))
        graph = function.get_concrete_function(tf.TensorSpec((None, HEADS, SEQ, SEQ), tf.bfloat16)).graph
        casts = [op for op in graph.get_operations() if op.type == "Cast"]
        return [(op.inputs[0].dtype.name, op.outputs[0].dtype.name) for op in casts]

    assert ("bfloat16", "float32") not in graph_casts(training=False)  # Only the mask is cast.
    assert ("bfloat16", "float32") in graph_casts(training=True)  # The reference lifts the scores.


def test_float16_masks_without_overflow():
    scores, allowed = scores_and_mask("float16", per_query=False)
    ours = as_float32(masked_softmax(scores, allowed, training=False))
    assert np.all(np.isfinite(ours))
    np.testing.assert_allclose(ours, as_float32(masked_softmax_reference(scores, allowed)), rtol=0, atol=1e-3)
    np.testing.assert_allclose(ours.sum(-1), 1, atol=1e-2)
