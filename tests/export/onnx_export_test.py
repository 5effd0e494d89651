"""ONNX exports (`keras_bert3.export.onnx_export`) served by onnxruntime: the
outputs equal the task's within 1e-4 on real text (odd Unicode and texts past
the length limit included), and `tokenizer.json` gives the preprocessor's ids."""

import keras
import numpy as np
import onnx
import pytest
import tensorflow as tf

from keras_bert3.export.onnx_export import OnnxTextModel
from keras_bert3.export.onnx_export import export_onnx
from keras_bert3.export.onnx_export import hugging_face_tokenizer
from keras_bert3.export.onnx_export import onnx_session
from keras_bert3.models.bert_classifier import BertClassifier
from keras_bert3.models.bert_question_answerer import BertQuestionAnswerer
from keras_bert3.models.bert_token_classifier import BertTokenClassifier
from keras_bert3.preprocessing.bert_text_preprocessor import INPUT_NAMES
from tests.qa_passages import LENGTHS
from tests.qa_passages import passages
from tests.real_text import real_lines
from tests.real_text import real_pairs
from tests.test_case import tiny_backbone

# ONNX graphs from numpy weights (backends_agree_test.py: the backends agree); onnxruntime against the task.
pytestmark = [pytest.mark.backend_free, pytest.mark.cpu_numerics]

ODD_TEXTS = [
    "",
    "Café naïve résumé — “quoted” 東京 タワー 🙂 e\u0301\u0327",
    "\x00\x0b\u200b\ufeff zero-width and control characters\u2028",
    "word " * 200,  # Past the sequence length.
    "x" * 150,  # One word past max_word_chars: [UNK].
]


def task_of(kind: str, tokenizer, **kwargs):
    backbone = tiny_backbone(tokenizer.vocabulary_size())
    if kind == "classifier":
        return BertClassifier(backbone, 3, tokenizer=tokenizer, sequence_length=64, dropout=0.0, **kwargs)
    if kind == "token_classifier":
        return BertTokenClassifier(backbone, 5, tokenizer=tokenizer, sequence_length=64, dropout=0.0)
    backbone = tiny_backbone(tokenizer.vocabulary_size(), max_sequence_length=128)
    return BertQuestionAnswerer(backbone, tokenizer=tokenizer, **LENGTHS)


def texts_to_check() -> list[str]:
    return list(real_lines()[:: len(real_lines()) // 60]) + ODD_TEXTS


def token_ids_outputs(task, model_inputs: dict) -> dict:
    outputs = task({key: model_inputs[key] for key in INPUT_NAMES}, training=False)
    if not isinstance(outputs, dict):
        outputs = {"logits": outputs, "probabilities": keras.ops.softmax(outputs, axis=-1)}
    return {key: keras.ops.convert_to_numpy(value) for key, value in outputs.items()}


@pytest.mark.parametrize("kind", ["classifier", "token_classifier", "question_answerer"])
@pytest.mark.slow
def test_onnx_outputs_equal_the_tasks_on_real_and_odd_texts(kind, tokenizer, tmp_path):
    """model.onnx on token ids (a classifier's from tokenizer.json, the others' from their preprocessor)."""
    task = task_of(kind, tokenizer)
    task.export(str(tmp_path / "onnx"), format="onnx")
    served = OnnxTextModel(str(tmp_path / "onnx"))
    texts = texts_to_check()
    if kind == "classifier":  # Strings in.
        model_inputs = served.model_inputs(texts)
        onnx_outputs = served(texts)
    else:  # The token-ids model on the preprocessor's words, or its question-and-passage windows.
        if kind == "question_answerer":
            model_inputs = task.preprocessor.model_inputs(task.preprocessor((texts, texts[::-1])))
        else:
            model_inputs = task.preprocessor(task.preprocessor.as_words(tf.constant(texts)))
        model_inputs = {key: np.asarray(model_inputs[key]) for key in INPUT_NAMES}
        session = onnx_session(str(tmp_path / "onnx" / "model.onnx"))
        names = [output.name for output in session.get_outputs()]
        onnx_outputs = dict(zip(names, session.run(names, model_inputs)))
    expected = token_ids_outputs(task, model_inputs)
    if kind == "classifier":
        np.testing.assert_allclose(expected["logits"], task.predict(texts, verbose=0), atol=1e-4, rtol=0)
    assert sorted(onnx_outputs) == sorted(expected)
    for key in expected:
        np.testing.assert_allclose(onnx_outputs[key], expected[key], atol=1e-4, rtol=0)


@pytest.mark.slow
def test_question_answerer_answers_strings_as_its_saved_model(tokenizer, tmp_path):
    """text_model.onnx: questions and contexts in, the answers of the
    SavedModel's `serving_default` (the preprocessor's windows, the model and
    `best_spans`, here run eagerly) out, on real passages longer than a window,
    odd texts and a context past `max_windows` windows."""
    task = task_of("question_answerer", tokenizer)
    kernel = task.span_dense.kernel  # Logits far apart: no near-ties between the best spans.
    kernel.assign(keras.ops.convert_to_numpy(kernel) * 30)
    task.export(str(tmp_path / "onnx"), format="onnx")
    served = OnnxTextModel(str(tmp_path / "onnx"))
    questions, contexts = (list(side) for side in zip(*passages()))
    texts = texts_to_check()
    questions += texts + ["", "What?", "What?", "What?", "Where?"]
    # One word each, so that it is the answer: a NUL and a private-use character inside it, both deleted by BERT.
    # The last: more windows than `max_windows`, of different words. Windows of one word repeated hold the
    # same tokens, so their best spans tie; which one wins then rests on the last bit of each row's softmax,
    # which TensorFlow's kernels without oneDNN (AVX2 CPUs) round differently from row to row.
    contexts += texts[::-1] + ["", "", "left\x00right", "ab\ue000cd", " ".join(f"word{i}" for i in range(3000))]
    answers = served(questions, contexts)
    features = task.preprocessor((questions, contexts))
    assert np.bincount(np.asarray(features["example_index"]))[-1] == task.preprocessor.max_windows
    logits = task(task.preprocessor.model_inputs(features), training=False)
    expected = task.best_spans(features, logits["start_logits"], logits["end_logits"], tf.constant(contexts))
    expected = {key: np.asarray(value) for key, value in expected.items()}
    expected_answers = [answer.decode("utf-8").replace("\x00", "\x01") for answer in expected["answer"]]
    assert answers["answer"].tolist() == expected_answers  # NUL comes back as U+0001.
    assert answers["answer"][-3:-1].tolist() == ["left\x01right", "ab\ue000cd"]
    for key in ("start", "end"):
        np.testing.assert_array_equal(answers[key], expected[key])
    np.testing.assert_allclose(answers["score"], expected["score"], atol=1e-4, rtol=0)
    for context, answer, start, end in zip(contexts, *(answers[key] for key in ("answer", "start", "end"))):
        assert context[start:end].replace("\x00", "\x01") == answer
    assert len(set(answers["answer"].tolist())) > len(questions) // 2  # Spans all over the passages.
    assert answers["score"][-5:-3].tolist() == [0.0, 0.0] and answers["answer"][-5:-3].tolist() == ["", ""]
    np.testing.assert_allclose(answers["null_score_diff"], expected["null_score_diff"], atol=1e-3, rtol=0)
    assert [value.shape for value in served([], []).values()] == [(0,)] * 5
    with pytest.raises(ValueError, match="takes `question` and `context`: got 1 list"):
        served(questions)
    with pytest.raises(ValueError, match="Got 2 `question` and 1 `context` strings"):
        served(questions[:2], contexts[:1])
    with pytest.raises(Exception, match="context_rows_must_equal_question_rows"):  # Straight to onnxruntime.
        served.session.run(
            None, served.string_inputs(questions[:1], contexts[:1]) | {"context": np.array(contexts[:3], dtype=object)}
        )
    assert served(question=questions[:2], context=contexts[:2])["answer"].tolist() == answers["answer"][:2].tolist()
    expected_spans = expected  # Every span scored.
    # SQuAD v2.0: "" where no answer outscores the best span by the threshold, here half the questions'.
    task.null_threshold = float(np.median(expected["null_score_diff"]))
    task.export(str(tmp_path / "onnx_v2"), format="onnx")
    answers = OnnxTextModel(str(tmp_path / "onnx_v2"))(questions, contexts)
    expected = task.best_spans(features, logits["start_logits"], logits["end_logits"], tf.constant(contexts))
    expected_answers = [answer.decode("utf-8").replace("\x00", "\x01") for answer in np.asarray(expected["answer"])]
    assert answers["answer"].tolist() == expected_answers and expected_answers.count("") > len(questions) // 3
    np.testing.assert_allclose(answers["score"], np.asarray(expected["score"]), atol=1e-4, rtol=0)
    # Spans among each window's 2 likeliest starts and ends (`n_best`, Hugging Face run_qa.py's n_best_size).
    task.null_threshold, task.n_best = None, 2
    task.export(str(tmp_path / "onnx_n_best"), format="onnx")
    answers = OnnxTextModel(str(tmp_path / "onnx_n_best"))(questions, contexts)
    every_span = [answer.decode("utf-8").replace("\x00", "\x01") for answer in np.asarray(expected_spans["answer"])]
    expected = task.best_spans(features, logits["start_logits"], logits["end_logits"], tf.constant(contexts))
    expected_answers = [answer.decode("utf-8").replace("\x00", "\x01") for answer in np.asarray(expected["answer"])]
    assert answers["answer"].tolist() == expected_answers and expected_answers != every_span
    np.testing.assert_allclose(answers["score"], np.asarray(expected["score"]), atol=1e-4, rtol=0)


def test_token_classifier_words_as_predict(tokenizer, tmp_path):
    task = task_of("token_classifier", tokenizer)
    task.export(str(tmp_path / "onnx"), format="onnx")
    served = OnnxTextModel(str(tmp_path / "onnx"))
    texts = texts_to_check() + ["Call  os.walk\tfirst", "\x00 only\x00 \x00"]
    outputs = served(texts)
    words = task.preprocessor.as_words(tf.constant(texts))
    model_inputs = task.preprocessor(words)
    np.testing.assert_array_equal(outputs["word_positions"], np.asarray(model_inputs["word_positions"]))
    expected_words = [[w.decode().replace("\x00", "\x01") for w in row] for row in words.to_tensor("").numpy()]
    assert outputs["words"].tolist() == expected_words  # NUL comes back as U+0001.
    assert outputs["num_words"].tolist() == [len(text.split()) for text in texts]
    labels = np.where(outputs["word_positions"] >= 0, outputs["word_probabilities"].argmax(-1), -1)
    np.testing.assert_array_equal(outputs["word_labels"], labels)
    for row, word_logits in enumerate(task.predict(texts, verbose=0)):
        assert outputs["num_words"][row] == len(word_logits) == len(texts[row].split())
        expected = keras.ops.convert_to_numpy(keras.ops.softmax(np.nan_to_num(word_logits), axis=-1))
        expected[np.isnan(word_logits).any(-1)] = 0
        np.testing.assert_allclose(outputs["word_probabilities"][row, : len(word_logits)], expected, atol=1e-4, rtol=0)


def test_tokenizer_json_packs_as_the_preprocessor_on_all_real_lines(tokenizer):
    task = task_of("classifier", tokenizer)
    served = hugging_face_tokenizer(task.preprocessor)
    lines = list(real_lines()) + ODD_TEXTS
    ours = task.preprocessor(lines)
    theirs = served.encode_batch(lines)
    mask = np.asarray(ours["padding_mask"]).astype(bool)
    ids, segments = np.asarray(ours["token_ids"]), np.asarray(ours["segment_ids"])
    differing = [
        line
        for row, (line, encoding) in enumerate(zip(lines, theirs))
        if list(ids[row][mask[row]]) != encoding.ids[: mask[row].sum()]
        or sum(encoding.attention_mask) != mask[row].sum()
        or list(segments[row][mask[row]]) != encoding.type_ids[: mask[row].sum()]
    ]
    assert not differing, f"{len(differing)} of {len(lines)} lines differ, e.g. {differing[:3]}"


def test_pair_classifier_on_real_pairs(tokenizer, tmp_path):
    task = task_of("classifier", tokenizer, sentence_pairs=True)
    export_onnx(task, str(tmp_path / "onnx"))
    served = OnnxTextModel(str(tmp_path / "onnx"))
    first, second = (list(side) for side in zip(*real_pairs()[:200]))
    first, second = first + ODD_TEXTS, second + ODD_TEXTS[::-1]
    ours = {key: np.asarray(value) for key, value in task.preprocessor((first, second)).items()}
    theirs = served.model_inputs(first, second)
    length = theirs["token_ids"].shape[1]
    for key in INPUT_NAMES:
        np.testing.assert_array_equal(theirs[key], ours[key][:, :length])
    assert not ours["padding_mask"][:, length:].any()
    expected = task.predict((first, second), verbose=0)
    np.testing.assert_allclose(served(first, second)["logits"], expected, atol=1e-4, rtol=0)
    with pytest.raises(ValueError, match="takes `text` and `text_pair`: got 1 list of strings"):
        served(first)
    with pytest.raises(ValueError, match="Got 2 `text` and 1 `text_pair` strings"):
        served(first[:2], second[:1])


def test_int8_export_stays_close_to_float32(tokenizer, tmp_path):
    task = task_of("classifier", tokenizer)
    export_onnx(task, str(tmp_path / "float32"))
    export_onnx(task, str(tmp_path / "int8"), quantize="int8")
    texts = texts_to_check()
    float32 = OnnxTextModel(str(tmp_path / "float32"))(texts)["probabilities"]
    int8 = OnnxTextModel(str(tmp_path / "int8"))(texts)["probabilities"]
    quantized = onnx.load(str(tmp_path / "int8" / "model.onnx"))
    assert sum(node.op_type in ("MatMulInteger", "DynamicQuantizeMatMul") for node in quantized.graph.node) >= 12
    np.testing.assert_allclose(int8, float32, atol=0.02, rtol=0)
    # model.onnx is standard ONNX; text_model.onnx has onnxruntime's fused attention, quantized in int8.
    layers = task.backbone.num_layers
    assert {node.domain for node in onnx.load(str(tmp_path / "float32" / "model.onnx")).graph.node} == {""}
    fused = onnx.load(str(tmp_path / "float32" / "text_model.onnx")).graph.node
    assert sum(node.op_type == "Attention" for node in fused) == layers
    fused_int8 = onnx.load(str(tmp_path / "int8" / "text_model.onnx")).graph.node
    assert sum(node.op_type == "QAttention" for node in fused_int8) == layers


def test_bad_inputs(tokenizer, tmp_path):
    task = task_of("classifier", tokenizer)
    with pytest.raises(ValueError, match="Unknown quantization 'int4'"):
        task.export(str(tmp_path / "int4"), format="onnx", quantize="int4")
    with pytest.raises(ValueError, match="Unrecognized format=onnx-strings"):
        task.export(str(tmp_path / "other"), format="onnx-strings")
    assert not (tmp_path / "int4").exists() and not (tmp_path / "other").exists()
    export_onnx(task, str(tmp_path / "onnx"))
    served = OnnxTextModel(str(tmp_path / "onnx"))
    with pytest.raises(ValueError, match="takes `text`: got 2 lists of strings"):
        served(["a"], ["b"])
    with pytest.raises(ValueError, match=r"text\[1\] is not valid UTF-8"):
        served([b"fine", b"\xff\xfe broken"])
    # An empty string and a 1 MB string are served: [CLS] [SEP], and the first 64 tokens.
    assert served([])["probabilities"].shape == (0, 3)  # No strings: no rows.
    outputs = served(["", "word " * 200_000])
    assert outputs["probabilities"].shape == (2, 3)
    assert served.model_inputs(["", "word " * 200_000])["padding_mask"].sum(axis=1).tolist() == [2, 64]
