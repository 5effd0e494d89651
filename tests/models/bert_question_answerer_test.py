"""BertQuestionAnswerer against real oracles: Hugging Face's
`BertForQuestionAnswering` and its question-answering pipeline's decoding, a
real fine-tuning run, and the SavedModel served in the TF-only serving runtime.
Its windows and labels are tested in tests/preprocessing/."""

import keras
import numpy as np
import pytest

from keras_bert3.metrics.squad_scores import squad_scores
import tensorflow as tf

from keras_bert3.models.bert_question_answerer import BertQuestionAnswerer
from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
from keras_bert3_demo.docstring_questions import docstring_questions
from tests.real_sentences import real_sentences
from tests.hf_helpers import save_hf_task
from tests.qa_passages import LENGTHS
from tests.qa_passages import passages
from tests.reference import import_reference
from tests.saved_model_client import assert_serving_ops
from tests.saved_model_client import assert_warmup_served
from tests.saved_model_client import call_in_serving_runtime
from tests.test_case import tiny_backbone


def tiny_answerer(minilm_dir, **kwargs):
    tokenizer = BertTokenizer.from_preset(minilm_dir)
    backbone = tiny_backbone(tokenizer.vocabulary_size(), seed=1, max_sequence_length=128)
    return BertQuestionAnswerer(backbone, tokenizer=tokenizer, **{**LENGTHS, **kwargs})


@pytest.fixture(scope="module")
def hf_qa_dir(minilm_dir, tmp_path_factory):
    """MiniLM as a `BertForQuestionAnswering` (its head random, seeded), saved as Hugging Face does."""
    torch = import_reference("torch")
    transformers = import_reference("transformers")
    torch.manual_seed(0)
    model = transformers.BertForQuestionAnswering.from_pretrained(minilm_dir)
    torch.nn.init.normal_(model.qa_outputs.weight, std=0.2)
    torch.nn.init.normal_(model.qa_outputs.bias, std=0.2)
    return save_hf_task(model, minilm_dir, tmp_path_factory.mktemp("hf_qa")), model.eval()


def hf_pipeline_answer(model, tokenizer, question, context, *, max_answer_len=15):
    """transformers' question-answering pipeline (v4; removed in v5 but for its
    decoding functions): overflowing windows, `select_starts_ends` per window,
    `align_to_words`, the best score over windows. Returns the answer and every
    window's start/end logits."""
    import torch
    from transformers.pipelines.document_question_answering import select_starts_ends

    encoded = tokenizer(
        question,
        context,
        truncation="only_second",
        max_length=LENGTHS["sequence_length"],
        stride=LENGTHS["doc_stride"],
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
        return_token_type_ids=True,
    )
    answers, logits = [], []
    for window in range(len(encoded["input_ids"])):
        inputs = {
            key: torch.tensor([encoded[key][window]]) for key in ("input_ids", "token_type_ids", "attention_mask")
        }
        with torch.no_grad():
            output = model(**inputs)
        start, end = output.start_logits.numpy(), output.end_logits.numpy()
        logits.append((start[0], end[0]))
        p_mask = np.array([[int(s != 1) for s in encoded.sequence_ids(window)]])
        p_mask[0, np.array(encoded["input_ids"][window]) == tokenizer.cls_token_id] = 0
        attention = np.array([encoded["attention_mask"][window]])
        starts, ends, scores, _ = select_starts_ends(start, end, p_mask, attention, max_answer_len=max_answer_len)
        encoding = encoded.encodings[window]
        for s, e, score in zip(starts, ends, scores):
            first = encoding.word_to_chars(encoding.token_to_word(s), sequence_index=1)[0]
            last = encoding.word_to_chars(encoding.token_to_word(e), sequence_index=1)[1]
            answers.append({"score": float(score), "start": first, "end": last, "answer": context[first:last]})
    return sorted(answers, key=lambda a: a["score"], reverse=True)[0], logits


@pytest.mark.slow
def test_logits_and_answers_match_hugging_face_pipeline(hf_qa_dir):
    directory, hf_model = hf_qa_dir
    hf_tokenizer = import_reference("transformers").BertTokenizerFast.from_pretrained(directory)
    qa = BertQuestionAnswerer.from_preset(directory, **LENGTHS)  # Loads qa_outputs.
    questions, contexts = zip(*passages())
    ours = qa.predict((list(questions), list(contexts)), batch_size=16, verbose=0)
    features = qa.preprocessor((list(questions), list(contexts)))
    logits = qa.predict(qa.preprocessor.model_inputs(features), verbose=0)
    example_index = np.asarray(features["example_index"])
    agree, windows, max_diff = 0, 0, 0.0
    for i, (question, context) in enumerate(zip(questions, contexts)):
        expected, hf_logits = hf_pipeline_answer(hf_model, hf_tokenizer, question, context)
        rows = np.flatnonzero(example_index == i)
        assert len(rows) == len(hf_logits)  # The same windows.
        for row, (start, end) in zip(rows, hf_logits):
            n = len(start)
            max_diff = max(
                max_diff,
                np.abs(logits["start_logits"][row, :n] - start).max(),
                np.abs(logits["end_logits"][row, :n] - end).max(),
            )
        windows += len(rows)
        same = (ours[i]["answer"], ours[i]["start"], ours[i]["end"]) == (
            expected["answer"],
            expected["start"],
            expected["end"],
        )
        agree += same and abs(ours[i]["score"] - expected["score"]) < 1e-5
    print(f"\n{windows} windows, logits max abs diff {max_diff:.2e}, answers equal {agree}/{len(questions)}")
    assert windows > 2 * len(questions)  # Long passages: the stride matters.
    assert max_diff < 1e-4
    assert agree == len(questions)


def without_answers(data: dict, every: int) -> dict:
    """SQuAD v2.0's kind of question: every `every`-th question asked of a passage that does not answer it (answer_text
    "", answer_start -1): sentences of Python's reference documentation that say nothing of what returns what."""
    sentences = [s for s in real_sentences(400, min_words=6, max_words=30) if "return" not in s.lower()]
    data = {key: list(values) for key, values in data.items()}
    for n, i in enumerate(range(0, len(data["question"]), every)):
        data["context"][i] = " ".join(sentences[(2 * n + k) % len(sentences)] for k in range(2))
        data["answer_text"][i], data["answer_start"][i] = "", -1
    return data


@pytest.mark.slow
@pytest.mark.one_pass
def test_fine_tuning_learns_to_answer_and_to_tell_unanswerable_questions(minilm_dir):
    """A short real run on docstring questions, a quarter of them asked of a passage that does not answer them
    (SQuAD v2.0's kind; MiniLM's first 3 layers): exact match on the answerable ones rises well above the untrained
    model's; with the null-score threshold chosen on 80 other questions as `finetune --validation` chooses it (the
    paper's section 4.3), the unanswerable ones are answered "" far more often than always answering does (never),
    and F1 over all is higher. Up to a minute on a CPU core: an epoch of 320 questions, and the test questions
    answered before and after it."""
    from keras_bert3.jobs.question_answerer_job import QuestionAnswererJob
    from keras_bert3.preprocessing.squad_files import SquadQuestions

    data = docstring_questions()
    train = without_answers({key: values[:320] for key, values in data["train"].items()}, every=4)
    held_out = without_answers({key: values[320:400] for key, values in data["train"].items()}, every=4)
    test = without_answers(data["test"], every=4)
    answerable = [bool(text) for text in test["answer_text"]]
    keras.utils.set_random_seed(0)
    qa = BertQuestionAnswerer.from_preset(
        minilm_dir, sequence_length=64, doc_stride=16, max_query_length=16, num_layers=3
    )
    qa.compile(learning_rate=2e-4)

    def answers():
        return [a["answer"] for a in qa.predict((test["question"], test["context"]), batch_size=64, verbose=0)]

    def exact_match(given):
        return np.mean([a == t for a, t, keep in zip(given, test["answer_text"], answerable) if keep])

    before = exact_match(answers())
    history = qa.fit(train, epochs=1, batch_size=16, verbose=0)
    spans = answers()
    qa.null_threshold = 0.0  # A v2.0 answerer (finetune sets it so on a v2.0 file), then tuned as finetune does.
    validation = SquadQuestions(
        id=list(map(str, range(80))),
        question=held_out["question"],
        context=held_out["context"],
        answers=[[t] if t else [] for t in held_out["answer_text"]],
        answer_starts=[[s] if t else [] for s, t in zip(held_out["answer_start"], held_out["answer_text"])],
    )
    chosen = QuestionAnswererJob().tune(qa, validation, None)
    with_null = answers()
    no_answer = np.mean([not a for a, keep in zip(with_null, answerable) if not keep])
    references = [[t] if t else [] for t in test["answer_text"]]
    f1 = {name: squad_scores(given, references)["f1"] for name, given in (("spans", spans), ("null", with_null))}
    print(f"\nexact match {before:.3f} -> {exact_match(spans):.3f}, NoAns {no_answer:.3f}, F1 {f1}, {chosen}")
    assert exact_match(spans) > before + 0.15
    assert chosen["null_threshold"] == qa.null_threshold and no_answer > 0.3 and not any(not a for a in spans)
    assert f1["null"] > f1["spans"] + 0.05


@pytest.mark.slow
def test_preset_and_config_round_trip(minilm_dir, tmp_path):
    qa = tiny_answerer(minilm_dir, max_answer_length=7)
    questions, contexts = map(list, zip(*passages()[:3]))
    expected = qa.predict((questions, contexts), verbose=0)
    qa.save_to_preset(str(tmp_path / "preset"))
    restored = BertQuestionAnswerer.from_preset(str(tmp_path / "preset"))
    assert restored.task_config() == qa.task_config()
    assert restored.predict((questions, contexts), verbose=0) == expected
    assert qa.predict((tf.constant(questions), np.array(contexts)), verbose=0) == expected  # As Keras users pass texts.
    rebuilt = BertQuestionAnswerer.from_config(qa.get_config())
    rebuilt.set_weights(qa.get_weights())
    assert rebuilt.predict((questions, contexts), verbose=0) == expected
    in_twos = qa.predict((questions, contexts), 2)  # Keras' predict(x, batch_size): other batches, other padding.
    assert [{**a, "score": pytest.approx(a["score"], rel=1e-5)} for a in expected] == in_twos
    # The form before 2026-11-29, positional and keyword, also with Keras' own keywords after it.
    for old_form in ((questions, contexts), (questions,)):
        for more in ({}, {"batch_size": 32}):
            with pytest.warns(DeprecationWarning, match=r"pass predict\(\(questions, contexts\)\)"):
                keywords = {} if len(old_form) == 2 else {"contexts": contexts}
                assert qa.predict(*old_form, verbose=0, **keywords, **more) == expected
    for answer, context in zip(expected, contexts):
        assert context[answer["start"] : answer["end"]] == answer["answer"]
        assert len(qa.preprocessor.tokenizer.tokenize(answer["answer"])) <= 7 + 1  # Word-aligned.
    with pytest.raises(ValueError, match="BertClassifier"):
        from keras_bert3.models.bert_classifier import BertClassifier

        BertClassifier.from_preset(str(tmp_path / "preset"))


@pytest.mark.slow
def test_fit_takes_squad_examples_rows_and_validation_data(minilm_dir):
    qa = tiny_answerer(minilm_dir)
    data = {key: values[:24] for key, values in docstring_questions()["train"].items()}
    rows = [dict(zip(data, values)) for values in zip(*data.values())]
    history = qa.fit(rows, validation_data=data, batch_size=8, verbose=0)
    assert {"loss", "val_loss", "start_logits_accuracy", "val_end_logits_accuracy"} <= set(history.history)
    assert np.isfinite(history.history["val_loss"]).all()


@pytest.mark.backend_free
def test_bad_input_raises_clear_errors(minilm_dir):
    qa = tiny_answerer(minilm_dir)
    good = {"question": ["What is it?"], "context": ["It is a test."], "answer_text": ["a test"], "answer_start": [6]}
    with pytest.raises(ValueError, match="does not point at answer_text"):
        qa.fit({**good, "answer_start": [5]}, verbose=0)
    with pytest.raises(ValueError, match="different lengths"):
        qa.fit({**good, "question": ["a", "b"]}, verbose=0)
    with pytest.raises(ValueError, match="question 0 is empty"):
        qa.fit({**good, "question": ["  "]}, verbose=0)
    with pytest.raises(ValueError, match="keys"):
        qa.fit({"question": ["x"]}, verbose=0)
    with pytest.raises(ValueError, match="one context per question"):
        qa.predict((["a", "b"], ["text"]))
    with pytest.raises(ValueError, match="windows would not advance"):
        tiny_answerer(minilm_dir, doc_stride=100)


@pytest.mark.slow
def test_export_answers_like_predict_in_the_serving_runtime(minilm_dir, tmp_path):
    qa = tiny_answerer(minilm_dir, max_windows=8)
    questions, contexts = map(list, zip(*passages()[:6]))
    contexts[1] = "Café 東京 naïve — " + contexts[1]  # Non-ASCII before the answer: offsets count characters.
    spans = qa.predict((questions, contexts), verbose=0)
    # SQuAD v2.0: "" where no answer outscores the best span by the threshold, here half the questions'.
    qa.null_threshold = float(np.median([e["null_score_diff"] for e in spans]))
    expected = qa.predict((questions, contexts), verbose=0)
    assert sum(not e["answer"] for e in expected) >= 2 and sum(bool(e["answer"]) for e in expected) >= 2
    features = qa.preprocessor((questions, contexts))
    model_inputs = qa.preprocessor.model_inputs(features)
    expected_logits = qa.predict({k: np.asarray(v) for k, v in model_inputs.items()}, verbose=0)
    export_dir = tmp_path / "export"
    qa.export(str(export_dir))
    bad_questions = [b"", b"What?", b"\xff\xfe\xc3(caf\xc3\xa9", b"Why?"]
    bad_contexts = [b"Some text.", b"", b"\xff\xfe\xc3(caf\xc3\xa9 \xed\xa0\x80 ok", b"word " * 20000]
    served = call_in_serving_runtime(
        export_dir,
        tmp_path,
        {
            "answers": ("serving_default", {"question": questions, "context": contexts}),
            "bad": ("serving_default", {"question": bad_questions, "context": bad_contexts}),
            "ids": ("serve_token_ids", {k: np.asarray(v) for k, v in model_inputs.items()}),
            "empty": ("serving_default", {"question": np.array([], dtype=bytes), "context": np.array([], dtype=bytes)}),
            "refused_missing": ("serving_default", {"question": questions}),
        },
    )
    assert_serving_ops(served)  # TensorFlow core and tf-text ops only.
    assert_warmup_served(served, export_dir)
    assert served["empty"]["answer"].shape == (0,)  # A request of no strings answers with no rows.
    assert b"context" in served["refused_missing"]["error"][0]
    assert served.signatures["serving_default"]["inputs"] == {"question": "DT_STRING", "context": "DT_STRING"}
    answers = served["answers"]
    assert [a.decode("utf-8") for a in answers["answer"]] == [e["answer"] for e in expected]
    assert answers["start"].tolist() == [e["start"] for e in expected]
    assert answers["end"].tolist() == [e["end"] for e in expected]
    np.testing.assert_allclose(answers["score"], [e["score"] for e in expected], atol=1e-5)
    np.testing.assert_allclose(answers["null_score_diff"], [e["null_score_diff"] for e in expected], atol=1e-4)
    for name in ("start_logits", "end_logits"):
        np.testing.assert_allclose(served["ids"][name], expected_logits[name], atol=1e-5)
    bad = served["bad"]
    assert bad["answer"][1] == b"" and bad["score"][1] == 0  # Empty context: no answer, and predict's the same.
    (empty,) = qa.predict((["What?"], [""]), verbose=0)
    assert empty | {"null_score_diff": 0} == {"answer": "", "start": 0, "end": 0, "score": 0.0, "null_score_diff": 0}
    assert bad["start"][1] == 0 and bad["end"][1] == 0
    assert np.isfinite(bad["score"]).all() and len(bad["answer"]) == 4
    assert bad["end"][3] <= 8 * 128 * 5  # 100,000 characters: only max_windows windows read.
