"""BertClassifier on raw text: fit/evaluate/predict on strings and pairs,
presets and bad input (tiny backbone, MiniLM's real vocabulary, real docstring
sentences). Its preprocessing is tested in tests/preprocessing/."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_bert3.models.bert_classifier import BertClassifier
from keras_bert3.preprocessing.bert_text_preprocessor import BertTextPreprocessor
from keras_bert3.preprocessing.text_classification_dataset import text_classification_dataset
from tests.test_case import tiny_backbone


def schedule_length(task) -> int:
    """The `total_steps` of the task optimizer's schedule, from its public config."""
    return task.optimizer.get_config()["learning_rate"]["config"]["total_steps"]


def tiny_classifier(tokenizer, num_classes=3, **kwargs):
    return BertClassifier(tiny_backbone(tokenizer.vocabulary_size()), num_classes, tokenizer=tokenizer, **kwargs)


@pytest.mark.slow
def test_fit_evaluate_predict_on_raw_strings(tokenizer, topics):
    classifier = tiny_classifier(tokenizer, num_classes=6, sequence_length=16)
    texts, labels = topics["train_texts"][:64], np.array(topics["train_labels"][:64])
    classifier.compile(learning_rate=1e-2, warmup_ratio=0.0)
    before = classifier.evaluate(texts, labels, batch_size=32, verbose=0, return_dict=True)
    history = classifier.fit(texts, labels, batch_size=32, epochs=10, verbose=0)
    after = classifier.evaluate(texts, labels, batch_size=32, verbose=0, return_dict=True)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert after["loss"] < before["loss"] - 0.05  # It fits its training texts.
    # The default schedule spans exactly this fit: 10 epochs of 2 batches.
    assert schedule_length(classifier) == 20
    logits = classifier.predict(texts[:10], batch_size=4, verbose=0)
    assert logits.shape == (10, 6)
    one_by_one = np.concatenate([classifier.predict([t], verbose=0) for t in texts[:3]])
    np.testing.assert_allclose(logits[:3], one_by_one, atol=1e-5)
    model_inputs = classifier.preprocessor(texts[:10])
    np.testing.assert_allclose(
        logits, classifier.predict({k: v.numpy() for k, v in model_inputs.items()}, verbose=0), atol=1e-5
    )
    # Every input kind a Keras user passes: numpy strings, a tf.string tensor.
    np.testing.assert_allclose(classifier.predict(np.array(texts[:10]), batch_size=4, verbose=0), logits, atol=1e-5)
    np.testing.assert_allclose(classifier.predict(tf.constant(texts[:10]), batch_size=4, verbose=0), logits, atol=1e-5)


@pytest.mark.slow
def test_fit_on_a_dataset_of_strings(tokenizer, topics):
    classifier = tiny_classifier(tokenizer, num_classes=6, sequence_length=16)
    texts, labels = topics["train_texts"][:40], topics["train_labels"][:40]
    unbatched = tf.data.Dataset.from_tensor_slices((texts, labels))
    history = classifier.fit(unbatched, batch_size=16, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    assert schedule_length(classifier) == 3
    batched = unbatched.batch(20)
    assert np.isfinite(classifier.evaluate(batched, verbose=0, return_dict=True)["loss"])


@pytest.mark.slow
def test_batches_of_a_dataset_larger_than_batch_size(tokenizer, topics):
    """A dataset batched by its user in 20s, `batch_size` 8: the same loss as
    the texts batched by the task, steps compiled or not."""
    classifier = tiny_classifier(tokenizer, num_classes=6, sequence_length=16)
    classifier.compile()
    texts, labels = topics["train_texts"][:33], np.array(topics["train_labels"][:33])
    expected = classifier.evaluate(texts, labels, batch_size=8, verbose=0, return_dict=True)["loss"]
    batched = tf.data.Dataset.from_tensor_slices((texts, labels)).batch(20)
    loss = classifier.evaluate(batched, batch_size=8, verbose=0, return_dict=True)["loss"]
    np.testing.assert_allclose(loss, expected, rtol=1e-5)


@pytest.mark.slow
def test_predict_on_a_dataset_of_texts_gives_a_row_per_text(tokenizer, topics):
    """Batches of 5 texts (and a last one of 3), with the steps compiled
    (fixed shapes where XLA runs them): 13 rows, those of the list."""
    classifier = tiny_classifier(tokenizer, num_classes=6, sequence_length=16)
    classifier.compile()
    texts = topics["train_texts"][:13]
    expected = classifier.predict(texts, verbose=0)
    for dataset in (tf.data.Dataset.from_tensor_slices(texts).batch(5), tf.data.Dataset.from_tensor_slices(texts)):
        logits = classifier.predict(dataset, batch_size=4, verbose=0)
        assert logits.shape == (13, 6)
        np.testing.assert_allclose(logits, expected, atol=1e-5)


@pytest.mark.slow
def test_sentence_pairs(tokenizer, topics):
    classifier = tiny_classifier(tokenizer, num_classes=2, sequence_length=16, sentence_pairs=True)
    first, second = topics["train_texts"][:12], topics["train_texts"][12:24]
    classifier.fit((first, second), np.arange(12) % 2, batch_size=6, verbose=0)
    logits = classifier.predict((first, second), verbose=0)
    assert logits.shape == (12, 2)
    swapped = classifier.predict((second, first), verbose=0)
    assert np.abs(logits - swapped).max() > 1e-6  # Segment B is B.
    with pytest.raises(ValueError, match="sentence pairs"):
        classifier.predict(first, verbose=0)
    single = tiny_classifier(tokenizer, num_classes=2, sequence_length=16)
    with pytest.raises(ValueError, match="single texts"):
        single.predict((first, second), verbose=0)


@pytest.mark.slow
def test_fit_builds_the_optimizer_before_the_first_step(tokenizer, topics):
    # Were AdamW's moments created inside the first traced step, tf.function
    # would trace the whole step twice (TensorFlow, no strategy).
    class OptimizerBuiltAtStart(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.built = self.model.optimizer.built

    classifier = tiny_classifier(tokenizer, num_classes=6, sequence_length=32)
    classifier.compile()
    probe = OptimizerBuiltAtStart()
    classifier.fit(
        topics["train_texts"][:96],
        np.array(topics["train_labels"][:96]),
        batch_size=16,
        epochs=2,
        verbose=0,
        callbacks=[probe],
    )
    assert probe.built
    assert classifier.optimizer.iterations.numpy() == 12


@pytest.mark.backend_free
def test_datasets_run_without_tf_data_autotuning(tokenizer, topics):
    # With it, deleting the iterator at the end of fit waited for tf.data's
    # optimization thread (15.7 s after a 46-step MiniLM fit).
    preprocessor = BertTextPreprocessor(tokenizer, sequence_length=32)
    texts, labels = topics["train_texts"][:40], topics["train_labels"][:40]
    for dataset in (
        text_classification_dataset(texts, labels, preprocessor=preprocessor, batch_size=16, shuffle=True),
        text_classification_dataset(tf.data.Dataset.from_tensor_slices((texts, labels)), preprocessor=preprocessor),
    ):
        assert dataset.options().autotune.enabled is False
        assert sum(len(y) for _, y in dataset) == 40


def test_bad_input(tokenizer):
    classifier = tiny_classifier(tokenizer, num_classes=3, sequence_length=16)
    with pytest.raises(ValueError, match="outside 0..2"):
        classifier.fit(["a text", "another"], np.array([0, 3]), verbose=0)
    with pytest.raises(ValueError, match="outside 0..2"):
        classifier.fit(["a text", "another"], np.array([-1, 0]), verbose=0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_classes"):
        classifier.fit(tf.data.Dataset.from_tensor_slices((["a text", "b"], [0, 7])), verbose=0)
    with pytest.raises(TypeError, match="wrap a single text in a list"):
        classifier.predict("one text", verbose=0)
    with pytest.raises(TypeError, match="list of texts"):
        classifier.predict(tf.constant("one text"), verbose=0)
    with pytest.raises(TypeError, match="got a float32 EagerTensor of shape"):
        classifier.predict(tf.constant([1.0, 2.0]), verbose=0)
    with pytest.raises(ValueError, match="at least 2 classes"):
        tiny_classifier(tokenizer, num_classes=1)
    logits = classifier.predict(["", "   \t\n", "word " * 20_000, "\udcff".encode("utf-8", "surrogatepass")], verbose=0)
    assert np.isfinite(logits).all()


@pytest.mark.slow
def test_preset_round_trip_restores_head_and_tokenizer(tokenizer, topics, tmp_path):
    classifier = tiny_classifier(tokenizer, num_classes=4, sequence_length=32)
    texts = topics["test_texts"][:16]
    classifier.fit(texts, np.arange(16) % 4, verbose=0)
    expected = classifier.predict(texts, verbose=0)
    preset = str(tmp_path / "finetuned")
    classifier.save_to_preset(preset)
    restored = BertClassifier.from_preset(preset)
    assert restored.num_classes == 4 and restored.preprocessor.sequence_length == 32
    np.testing.assert_allclose(restored.predict(texts, verbose=0), expected, atol=1e-5)
    assert BertClassifier.from_preset(preset, num_classes=4).num_classes == 4
    with pytest.raises(ValueError, match="trained for 4 classes"):
        BertClassifier.from_preset(preset, num_classes=3)
    backbone_only = str(tmp_path / "backbone")
    classifier.backbone.save_to_preset(backbone_only)
    tokenizer.save_to_preset(backbone_only)
    with pytest.raises(ValueError, match="num_classes"):
        BertClassifier.from_preset(backbone_only)
    fresh = BertClassifier.from_preset(backbone_only, num_classes=2)
    assert fresh.predict(texts[:2], verbose=0).shape == (2, 2)


def test_config_round_trip(tokenizer):
    classifier = tiny_classifier(tokenizer, num_classes=3, sequence_length=16, dropout=0.2)
    again = BertClassifier.from_config(classifier.get_config())
    assert again.get_config() == classifier.get_config()
    again.set_weights(classifier.get_weights())
    texts = ["A short text.", "Return the value of the named attribute."]
    np.testing.assert_allclose(again.predict(texts, verbose=0), classifier.predict(texts, verbose=0), atol=1e-6)


@pytest.mark.slow
def test_from_preset_on_the_real_checkpoint(minilm_dir, topics):
    classifier = BertClassifier.from_preset(minilm_dir, num_classes=6)
    assert classifier.backbone.hidden_dim == 384
    texts = topics["test_texts"][:4]
    pooled = classifier.backbone(classifier.preprocessor(texts))["pooled_output"]
    assert pooled.shape == (4, 384)
    assert classifier.predict(texts, verbose=0).shape == (4, 6)
    assert os.path.isdir(minilm_dir)


@pytest.mark.slow
def test_a_batch_gives_the_same_bits_whatever_the_process_predicted_before(tokenizer, topics):
    """Keras's TensorFlow predict step traces the first shapes it meets on their own and later ones shape-generic,
    and the two graphs compute some rows 1 ulp apart: `predict --input` resumed midway wrote rows a bit apart from
    an uninterrupted run's. One model predicts the texts first; another with the same weights predicts them after
    batches of other lengths; the logits are the same bits."""
    texts = topics["train_texts"]
    first = tiny_classifier(tokenizer, num_classes=6, sequence_length=64)
    after = tiny_classifier(tokenizer, num_classes=6, sequence_length=64)
    after.set_weights(first.get_weights())
    target = texts[640:768]
    expected = first.predict(target, batch_size=32, verbose=0)
    for start in range(0, 640, 64):
        after.predict(texts[start : start + 64], batch_size=32, verbose=0)
    np.testing.assert_array_equal(after.predict(target, batch_size=32, verbose=0), expected)
