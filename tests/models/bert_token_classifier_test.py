"""BertTokenClassifier: logits and loss equal to `BertForTokenClassification`
(the word/WordPiece alignment is tested in tests/preprocessing/), a short real
fine-tuning run on the embedded code-tagging set, presets, config, bad input
and the SavedModel served in the TF-only serving runtime (tiny backbone on MiniLM's real
vocabulary; the real MiniLM checkpoint where parity is concerned)."""

import os
import time

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_bert3.models.bert_token_classifier import BertTokenClassifier
from keras_bert3_demo.docstring_code_tags import docstring_code_tags
from tests.hf_helpers import hf_first_pieces
from tests.hf_helpers import hf_outputs
from tests.hf_helpers import max_abs_diff
from tests.hf_helpers import save_hf_task
from tests.reference import import_reference
from tests.saved_model_client import assert_serving_ops
from tests.saved_model_client import assert_warmup_served
from tests.saved_model_client import call_in_serving_runtime
from tests.test_case import tiny_backbone

BAD_TEXTS = ["", "   \t\n ", "word " * 20_000, b"\xff\xfe\xc3(caf\xc3\xa9 \xed\xa0\x80"]


def tiny_tagger(tokenizer, num_labels=3, **kwargs):
    return BertTokenClassifier(tiny_backbone(tokenizer.vocabulary_size()), num_labels, tokenizer=tokenizer, **kwargs)


def ragged(rows, dtype="string"):
    return tf.ragged.constant(rows, dtype=dtype)


@pytest.mark.backend_free
def test_embedded_tagging_set(tags):
    assert len(tags["train_words"]) + len(tags["test_words"]) > 3000
    assert tags["tag_names"] == ["O", "B-CODE", "I-CODE"]
    flat = [t for sentence in tags["train_tags"] for t in sentence]
    assert 0.04 < np.mean(np.array(flat) > 0) < 0.2  # Code words are a minority, not absent.
    assert all(len(w) == len(t) for w, t in zip(tags["train_words"], tags["train_tags"]))
    assert docstring_code_tags()["test_words"][:5] == tags["test_words"][:5]  # Deterministic split.
    assert not set(map(tuple, tags["test_words"])) & set(map(tuple, tags["train_words"]))


@pytest.fixture(scope="module")
def hf_token_classifier_dir(minilm_dir, tmp_path_factory):
    """MiniLM as a Hugging Face `BertForTokenClassification` with a random 3-label head, saved."""
    transformers = import_reference("transformers")
    import_reference("torch").manual_seed(0)
    model = transformers.BertForTokenClassification.from_pretrained(minilm_dir, num_labels=3)
    return save_hf_task(model, minilm_dir, tmp_path_factory.mktemp("hf_token_classifier")), model


@pytest.mark.slow
def test_logits_and_loss_equal_hugging_face(hf_token_classifier_dir, tags):
    transformers = import_reference("transformers")
    torch = import_reference("torch")
    path, hf_model = hf_token_classifier_dir
    tagger = BertTokenClassifier.from_preset(path)  # num_labels read from the head.
    assert tagger.num_labels == 3
    with pytest.raises(ValueError, match="trained for 3 labels"):
        BertTokenClassifier.from_preset(path, num_labels=5)
    words, labels = tags["test_words"][:8], tags["test_tags"][:8]  # Different lengths: padding in the batch.
    hf_tokenizer = transformers.BertTokenizerFast.from_pretrained(path)
    encoding = hf_tokenizer(
        words, is_split_into_words=True, truncation=True, max_length=128, padding="longest", return_tensors="np"
    )
    inputs = {
        "token_ids": encoding["input_ids"].astype("int32"),
        "segment_ids": encoding["token_type_ids"].astype("int32"),
        "padding_mask": encoding["attention_mask"].astype("int32"),
    }
    hf_labels = np.full(inputs["token_ids"].shape, -100)
    for i in range(len(words)):
        for word, position in enumerate(hf_first_pieces(encoding, i, len(words[i]))):
            hf_labels[i, position] = labels[i][word]
    expected = hf_outputs(hf_model, inputs, labels=torch.tensor(hf_labels))
    ours = tagger.predict(inputs, verbose=0)
    real = inputs["padding_mask"].astype(bool)
    diff_real = max_abs_diff(ours[real], expected.logits.numpy()[real])
    diff_all = max_abs_diff(ours, expected.logits.numpy())
    loss = float(keras.ops.convert_to_numpy(tagger.loss(hf_labels.astype("int32"), ours)))
    # Per word through our own preprocessing (raw word lists in).
    per_word = tagger.predict(words, verbose=0)
    diff_words = max(
        max_abs_diff(per_word[i], expected.logits.numpy()[i, hf_first_pieces(encoding, i, len(words[i]))])
        for i in range(len(words))
    )
    print(
        f"logits max abs diff: real tokens {diff_real:.2e}, padding included {diff_all:.2e}, per word {diff_words:.2e}; "
        f"loss {loss:.6f} vs {float(expected.loss):.6f}"
    )
    assert diff_real < 1e-4 and diff_all < 1e-4 and diff_words < 1e-4
    assert abs(loss - float(expected.loss)) < 1e-5


def test_predict_on_words_and_strings(tokenizer, tags):
    tagger = tiny_tagger(tokenizer, sequence_length=16)
    words = tags["test_words"][:10]
    per_word = tagger.predict(words, batch_size=4, verbose=0)
    assert [p.shape for p in per_word] == [(len(w), 3) for w in words]
    model_inputs = tagger.preprocessor(ragged(words))
    logits = tagger.predict(
        {k: model_inputs[k].numpy() for k in ("token_ids", "segment_ids", "padding_mask")}, verbose=0
    )
    positions = model_inputs["word_positions"].numpy()
    for i, sentence in enumerate(words):
        where = positions[i, : len(sentence)]
        np.testing.assert_allclose(per_word[i][where >= 0], logits[i, where[where >= 0]], atol=1e-5)
        assert np.isnan(per_word[i][where < 0]).all()  # Beyond sequence_length 16: reported as NaN rows.
    assert sum(np.isnan(p[:, 0]).sum() for p in per_word) > 10
    from_strings = tagger.predict([" ".join(w) for w in words], verbose=0)
    from_tensors = tagger.predict(tf.constant([" ".join(w) for w in words]), verbose=0)
    from_ragged = tagger.predict(tf.ragged.constant(words), verbose=0)
    for a, b, c, d in zip(from_strings, from_tensors, from_ragged, per_word):
        for other in (a, b, c):
            np.testing.assert_allclose(other, d, atol=1e-5)
    one = tagger.predict([words[3]], verbose=0)[0]
    np.testing.assert_allclose(one, per_word[3], atol=1e-5)
    labels = tagger.predict_labels(words, batch_size=4)
    for label, logit in zip(labels, per_word):
        assert (label == -1).sum() == np.isnan(logit[:, 0]).sum()
        assert set(label.tolist()) <= {-1, 0, 1, 2}


@pytest.mark.slow
def test_bad_input(tokenizer):
    tagger = tiny_tagger(tokenizer, sequence_length=16)
    with pytest.raises(ValueError, match=r"outside 0\.\.2"):
        tagger.fit([["a", "b"]], [[0, 3]], verbose=0)
    with pytest.raises(ValueError, match=r"outside 0\.\.2"):
        tagger.fit([["a", "b"]], [[-1, 0]], verbose=0)
    with pytest.raises(ValueError, match="Sentence 1 has 2 words but 3 labels"):
        tagger.fit([["a"], ["b", "c"]], [[0], [0, 1, 2]], verbose=0)
    with pytest.raises(ValueError, match="Sentence 0 has 3 words but 2 labels"):
        tagger.fit(["split at  whitespace"], [[0, 1]], verbose=0)  # Strings: a label per whitespace word.
    with pytest.raises(ValueError, match="2 sentences but 1 label lists"):
        tagger.fit([["a"], ["b"]], [[0]], verbose=0)
    with pytest.raises(TypeError, match="wrap a single text in a list"):
        tagger.predict("one text", verbose=0)
    with pytest.raises(TypeError, match="not a mix"):
        tagger.predict(["a text", ["a", "list"]], verbose=0)
    with pytest.raises(ValueError, match="at least 2 labels"):
        tiny_tagger(tokenizer, num_labels=1)
    assert tagger.predict([[]], verbose=0)[0].shape == (0, 3)
    out = tagger.predict(BAD_TEXTS, verbose=0)
    assert [o.shape for o in out] == [(0, 3), (0, 3), (20_000, 3), (2, 3)]
    assert np.isfinite(out[2][:14]).all() and np.isnan(out[2][14:]).all()  # 14 words fit in 16 tokens.
    assert np.isfinite(out[3][0]).all() and np.isnan(out[3][1]).all()  # BERT's cleaning removes U+FFFD (as HF).
    history = tagger.fit(
        [[], ["", "x"], ["a", "b"]], [[], [0, 1], [2, 0]], verbose=0
    )  # Empty sentences train on nothing.
    assert np.isfinite(history.history["loss"][0])


def test_preset_round_trip_restores_head_and_tokenizer(tokenizer, tags, tmp_path):
    tagger = tiny_tagger(tokenizer, sequence_length=32)
    tagger.output_dense.bias.assign([0.5, -1.0, 2.0])  # A head that a fresh one could not equal.
    words = [w for w in tags["test_words"] if len(w) < 8][:8]  # One padded shape.
    expected = tagger.predict(words, verbose=0)
    preset = str(tmp_path / "tagger")
    tagger.save_to_preset(preset)
    restored = BertTokenClassifier.from_preset(preset)
    assert restored.num_labels == 3 and restored.preprocessor.sequence_length == 32
    assert restored.preprocessor.tokenizer.get_vocabulary() == tokenizer.get_vocabulary()
    for a, b in zip(restored.predict(words, verbose=0), expected):
        np.testing.assert_allclose(a, b, atol=1e-5)
    assert BertTokenClassifier.from_preset(preset, num_labels=3).num_labels == 3
    with pytest.raises(ValueError, match="trained for 3 labels"):
        BertTokenClassifier.from_preset(preset, num_labels=5)
    backbone_only = str(tmp_path / "backbone")
    tagger.backbone.save_to_preset(backbone_only)
    tokenizer.save_to_preset(backbone_only)
    with pytest.raises(ValueError, match="num_labels"):
        BertTokenClassifier.from_preset(backbone_only)
    assert BertTokenClassifier.from_preset(backbone_only, num_labels=5).output_dense.kernel.shape == (8, 5)


def test_config_round_trip(tokenizer):
    tagger = tiny_tagger(tokenizer, num_labels=4, sequence_length=16, dropout=0.2)
    again = BertTokenClassifier.from_config(tagger.get_config())
    assert again.get_config() == tagger.get_config()
    again.set_weights(tagger.get_weights())
    texts = ["A short text.", "Return the value of the named attribute."]
    for a, b in zip(again.predict(texts, verbose=0), tagger.predict(texts, verbose=0)):
        np.testing.assert_allclose(a, b, atol=1e-6)


def first_piece_accuracy(tagger, words, labels) -> tuple[float, float]:
    """Accuracy of `predict_labels` over the words that have a piece, and of always predicting O."""
    predicted = tagger.predict_labels(words)
    kept = np.concatenate([p >= 0 for p in predicted])
    truth = np.concatenate(labels)[kept]
    return float(np.mean(np.concatenate(predicted)[kept] == truth)), float(np.mean(truth == 0))


@pytest.mark.slow
@pytest.mark.one_pass
def test_fine_tuning_minilm_beats_the_majority_tag(minilm_dir, tags):
    """40 steps of batch 16 on MiniLM's first 2 layers, sentences of one length
    bucket (one compiled shape), trained on sentences with code, tested on all."""
    tagger = BertTokenClassifier.from_preset(minilm_dir, num_labels=3, sequence_length=32, num_layers=2)
    tagger.backbone.embeddings.token_embedding.trainable = False  # Pretrained pieces; fewer weights to update.

    def in_bucket(lengths):
        return (lengths > 16) & (lengths <= 32)

    lengths = tagger.preprocessor.token_lengths(ragged(tags["train_words"])).numpy()
    with_code = np.array([any(sentence) for sentence in tags["train_tags"]])
    train = np.flatnonzero(in_bucket(lengths) & with_code)[:640]
    test = np.flatnonzero(in_bucket(tagger.preprocessor.token_lengths(ragged(tags["test_words"])).numpy()))[:160]
    words, labels = [tags["train_words"][i] for i in train], [tags["train_tags"][i] for i in train]
    test_words, test_labels = [tags["test_words"][i] for i in test], [tags["test_tags"][i] for i in test]
    tagger.compile(learning_rate=5e-4, warmup_ratio=0.1)
    start = time.time()
    history = tagger.fit(words, labels, batch_size=16, epochs=1, verbose=0)
    fit_seconds = time.time() - start
    accuracy, baseline = first_piece_accuracy(tagger, test_words, test_labels)
    metrics = tagger.evaluate(test_words, test_labels, batch_size=16, verbose=0, return_dict=True)
    print(
        f"{len(train) // 16} steps in {fit_seconds:.1f} s (loss {history.history['loss'][0]:.3f}): test word accuracy "
        f"{accuracy:.4f} (evaluate: {metrics['accuracy']:.4f}), majority tag {baseline:.4f}"
    )
    assert abs(metrics["accuracy"] - accuracy) < 1e-4  # The metric counts each word's first piece only.
    assert accuracy > baseline + 0.01 and 1 - accuracy < 0.8 * (1 - baseline)  # A fifth of the errors gone, at least.


@pytest.mark.slow
def test_export_serves_strings_like_predict(tokenizer, tags, tmp_path):
    tagger = tiny_tagger(tokenizer, sequence_length=32)
    texts = [" ".join(w) for w in tags["test_words"][:12]]
    expected = tagger.predict(texts, batch_size=5, verbose=0)
    model_inputs = {k: v.numpy() for k, v in tagger.preprocessor(texts).items()}
    token_logits = tagger.predict({k: model_inputs[k] for k in ("token_ids", "segment_ids", "padding_mask")}, verbose=0)
    export_dir = tmp_path / "export"
    tagger.export(str(export_dir))
    served = call_in_serving_runtime(
        export_dir,
        tmp_path,
        {
            "text": ("serving_default", {"text": np.array([t.encode() for t in texts], dtype=bytes)}),
            "bad": (
                "serving_default",
                {"text": np.array([t if isinstance(t, bytes) else t.encode() for t in BAD_TEXTS], dtype=bytes)},
            ),
            "ids": ("serve_token_ids", {k: model_inputs[k] for k in ("token_ids", "segment_ids", "padding_mask")}),
            "empty": ("serving_default", {"text": np.array([], dtype=bytes)}),
        },
    )
    assert_serving_ops(served)  # TensorFlow core and tf-text ops only.
    assert_warmup_served(served, export_dir)
    assert served["empty"]["word_labels"].shape[0] == 0  # A request of no strings answers with no rows.
    assert served.signatures["serving_default"]["outputs"]["word_labels"] == "DT_INT32"
    text, bad, ids = served["text"], served["bad"], served["ids"]
    real = model_inputs["padding_mask"].astype(bool)
    diffs = {
        "logits": max_abs_diff(text["logits"][real], token_logits[real]),
        "ids": max_abs_diff(ids["logits"], token_logits),
        "word probabilities": max(
            max_abs_diff(
                text["word_probabilities"][i, : len(e)][~np.isnan(e[:, 0])],
                keras.ops.convert_to_numpy(keras.ops.softmax(e[~np.isnan(e[:, 0])])),
            )
            for i, e in enumerate(expected)
        ),
    }
    print("export vs predict, max abs diff:", {k: f"{v:.1e}" for k, v in diffs.items()})
    assert max(diffs.values()) < 1e-5
    for i, (sentence, e) in enumerate(zip(texts, expected)):
        count = len(sentence.split())
        assert text["num_words"][i] == count
        assert [w.decode() for w in text["words"][i, :count]] == sentence.split()
        labels = np.where(np.isnan(e[:, 0]), -1, np.argmax(np.nan_to_num(e), -1))
        np.testing.assert_array_equal(text["word_labels"][i, :count], labels)
        assert (text["word_labels"][i, count:] == -1).all()
    assert list(bad["num_words"]) == [0, 0, 20_000, 2]
    assert (bad["word_labels"][2, :30] >= 0).all() and (
        bad["word_labels"][2, 30:] == -1
    ).all()  # Truncated at 32 tokens.
    assert np.isfinite(bad["probabilities"]).all() and np.isfinite(bad["word_probabilities"]).all()
    assert bad["words"][3, 0].decode("utf-8").startswith("\ufffd")  # Invalid UTF-8 replaced, words stay valid.
    assert os.path.isdir(export_dir / "variables")
