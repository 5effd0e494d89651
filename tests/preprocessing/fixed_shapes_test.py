"""Fixed batch shapes for XLA-compiled steps (`fixed_shapes`): every batch of
raw texts padded to a bucket's length and to the full batch size with empty
rows, which the task's loss and metrics leave out, so that a padded batch
trains and scores exactly as the batch itself did (real docstring sentences,
MiniLM's vocabulary, tiny models)."""

import keras
import numpy as np
import pytest

from keras_bert3.models.bert_classifier import BertClassifier
from keras_bert3.models.bert_token_classifier import BertTokenClassifier
from keras_bert3.preprocessing.fixed_shapes import FixedShapeBatches
from keras_bert3.preprocessing.fixed_shapes import check_length_buckets
from keras_bert3.preprocessing.fixed_shapes import default_length_buckets
from keras_bert3.preprocessing.fixed_shapes import fixed_shape_batches
from tests.test_case import tiny_backbone

BUCKETS = (16, 32, 64)


def as_numpy(batch):
    return keras.tree.map_structure(lambda t: t.numpy(), batch)


def task(kind, tokenizer, **settings):
    keras.utils.set_random_seed(0)
    backbone = tiny_backbone(tokenizer.vocabulary_size(), dropout=0.0)
    if kind == "classifier":
        return BertClassifier(backbone, 6, tokenizer=tokenizer, dropout=0.0, sequence_length=64, **settings)
    return BertTokenClassifier(backbone, 3, tokenizer=tokenizer, dropout=0.0, sequence_length=64, **settings)


def examples(kind, topics, count: int):
    """`count` real sentences and labels (a label per word for tagging), with a per-example weight."""
    texts = topics["train_texts"][:count]
    weights = np.linspace(0.5, 2.0, count).astype("float32")
    if kind == "classifier":
        return texts, np.array(topics["train_labels"][:count]), weights
    words = [text.split()[:40] for text in texts]
    return words, [[len(word) % 3 for word in sentence] for sentence in words], weights


@pytest.mark.backend_free
def test_default_buckets_and_bad_bucket_lists(tokenizer):
    assert default_length_buckets(128, "cpu") == (32, 64, 128)
    assert default_length_buckets(512, "cpu") == (128, 256, 512)
    assert default_length_buckets(100, "cpu") == (32, 56, 100)  # Multiples of 8 below the limit.
    for accelerator in ("gpu", "tpu"):  # One program: compiling costs more than padding there.
        assert default_length_buckets(128, accelerator) == (128,)
        assert default_length_buckets(100, accelerator) == (100,)
    assert check_length_buckets([128, 32, 32], 128) == (32, 128)
    with pytest.raises(ValueError, match=r"length_buckets=\(32, 64\) does not cover sequence_length=128.*Add 128"):
        check_length_buckets([32, 64], 128)
    with pytest.raises(ValueError, match="at least one positive length"):
        check_length_buckets([0, 128], 128)
    with pytest.raises(ValueError, match="must be a list of lengths"):
        check_length_buckets(["short"], 128)
    classifier = task("classifier", tokenizer)
    with pytest.raises(ValueError, match="does not cover sequence_length=64"):
        classifier.compile(length_buckets=[16, 32])


def test_fixed_shapes_where_xla_compiles_the_steps(tokenizer):
    classifier = task("classifier", tokenizer)
    # JAX compiles every step; TensorFlow keeps its graph on a CPU unless XLA is asked for.
    fixed = keras.backend.backend() == "jax" or classifier.jit_compile is True
    assert classifier.batch_shapes == FixedShapeBatches((16, 32, 64) if fixed else None, per_token_targets=False)
    assert classifier.length_buckets == (16, 32, 64)
    classifier.compile(jit_compile=True, length_buckets=[32, 64])
    assert classifier.batch_shapes == FixedShapeBatches((32, 64), False) and classifier.length_buckets == (32, 64)
    classifier.compile(jit_compile=True, length_buckets=None)
    assert classifier.batch_shapes == FixedShapeBatches(None, per_token_targets=False)


@pytest.mark.parametrize("kind", ["classifier", "token classifier"])
@pytest.mark.backend_free
def test_padded_batches_hold_the_same_rows_and_mark_the_empty_ones(kind, tokenizer, topics):
    model = task(kind, tokenizer)
    model.compile(length_buckets=None)
    x, y, weights = examples(kind, topics, 70)  # Two full batches of 32 and one of 6.
    plain = [as_numpy(b) for b in model.batches(x, y, weights, batch_size=32)]
    fixed = [
        as_numpy(b)
        for b in fixed_shape_batches(model.batches(x, y, weights, batch_size=32), batch_size=32, buckets=BUCKETS)
    ]
    assert [len(b[0]["token_ids"]) for b in plain] == [32, 32, 6]
    label_padding = -100 if kind == "token classifier" else 0
    for (inputs, labels, weight), (padded, padded_labels, padded_weight) in zip(plain, fixed, strict=True):
        rows, width = inputs["token_ids"].shape
        bucket = min(length for length in BUCKETS if length >= width)
        for name, value in inputs.items():
            assert padded[name].shape == (32, bucket)
            np.testing.assert_array_equal(padded[name][:rows, :width], value)
            assert not padded[name][rows:].any() and not padded[name][:, width:].any()
        np.testing.assert_array_equal(
            padded_labels[:rows, ...][:, :width] if labels.ndim == 2 else padded_labels[:rows], labels
        )
        assert (padded_labels[rows:] == label_padding).all()
        np.testing.assert_array_equal(padded_weight[:rows], weight)
        assert not padded_weight[rows:].any()


@pytest.mark.parametrize("kind", ["classifier", "token classifier"])
@pytest.mark.slow
def test_a_padded_batch_trains_and_scores_as_the_batch_itself(kind, tokenizer, topics):
    """Today's batches (one shape per length, a smaller last batch) against the
    same batches padded: equal losses, metrics and updated weights."""
    x, y, weights = examples(kind, topics, 40)  # A full batch of 32 and one of 8.
    ours, reference = task(kind, tokenizer), task(kind, tokenizer)
    ours.compile(optimizer=keras.optimizers.SGD(learning_rate=0.5), jit_compile=True, length_buckets=BUCKETS)
    reference.compile(optimizer=keras.optimizers.SGD(learning_rate=0.5), length_buckets=None)
    plain = [as_numpy(b) for b in reference.batches(x, y, weights, batch_size=32)]
    fixed = [
        as_numpy(b)
        for b in fixed_shape_batches(ours.batches(x, y, weights, batch_size=32), batch_size=32, buckets=BUCKETS)
    ]
    for batch, padded in zip(plain, fixed, strict=True):
        expected = reference.test_on_batch(*batch, return_dict=True)
        assert ours.test_on_batch(*padded, return_dict=True) == pytest.approx(expected, rel=1e-6, abs=1e-7)
        expected = reference.train_on_batch(*batch, return_dict=True)
        assert ours.train_on_batch(*padded, return_dict=True) == pytest.approx(expected, rel=1e-6, abs=1e-7)
    for a, b in zip(ours.get_weights(), reference.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_fit_evaluate_and_predict_agree_with_and_without_fixed_shapes(tokenizer, topics):
    texts, labels = topics["test_texts"][:40], np.array(topics["test_labels"][:40])  # Batches of 32 and 8.
    fixed, plain = task("classifier", tokenizer), task("classifier", tokenizer)
    fixed.compile(jit_compile=True, length_buckets=BUCKETS)
    plain.compile(jit_compile=True, length_buckets=None)
    assert fixed.batch_shapes.buckets == BUCKETS and plain.batch_shapes.buckets is None
    np.testing.assert_allclose(fixed.predict(texts, batch_size=32), plain.predict(texts, batch_size=32), atol=1e-5)
    scores = fixed.evaluate(texts, labels, batch_size=32, return_dict=True, verbose=0)
    assert scores == pytest.approx(plain.evaluate(texts, labels, batch_size=32, return_dict=True, verbose=0), rel=1e-6)


def test_targets_of_two_axes_are_per_token_only_where_the_task_says_so(tokenizer):
    """A token classifier's `(batch, length)` labels get the batch's new length, filled with -100; a task of one
    output row per text keeps a `(batch, k)` target (a score column, a multi-hot row) as it is, rows filled with 0.
    A `(batch, 1)` score padded to the batch's length trained on -100s (found with a regressor on JAX)."""
    import tensorflow as tf

    inputs = {name: tf.ones((3, 20), tf.int32) for name in ("token_ids", "segment_ids", "padding_mask")}
    per_token, per_row = tf.fill((3, 20), 2), tf.constant([[0.5], [0.25], [1.0]])
    dataset = tf.data.Dataset.from_tensors((inputs, per_token))
    (_, labels) = next(iter(fixed_shape_batches(dataset, batch_size=4, buckets=BUCKETS)))
    assert labels.shape == (4, 32) and (labels.numpy()[:3, 20:] == -100).all() and (labels.numpy()[3] == -100).all()
    dataset = tf.data.Dataset.from_tensors((inputs, per_row))
    (_, scores) = next(iter(fixed_shape_batches(dataset, batch_size=4, buckets=BUCKETS, per_token_targets=False)))
    np.testing.assert_array_equal(scores.numpy(), [[0.5], [0.25], [1.0], [0.0]])
    assert task("classifier", tokenizer).batch_shapes.per_token_targets is False
    assert task("token_classifier", tokenizer).batch_shapes.per_token_targets is True
