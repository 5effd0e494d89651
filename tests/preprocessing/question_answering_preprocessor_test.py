"""QuestionAnsweringPreprocessor: its windows are the Hugging Face tokenizer's
overflowing windows, its span labels `prepare_train_features`' labels, and
the labels map back to the answer text."""

import numpy as np
import pytest

from keras_bert3.preprocessing.question_answering_preprocessor import QuestionAnsweringPreprocessor
from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
from keras_bert3_demo.docstring_questions import docstring_questions
from tests.qa_passages import LENGTHS
from tests.qa_passages import passages
from tests.reference import import_reference

pytestmark = pytest.mark.backend_free  # TensorFlow and tf-text only: no Keras backend reaches it.


def test_windows_and_labels_match_hugging_face(minilm_dir):
    """Windows = the tokenizer's overflowing windows; labels = `prepare_train_features`."""
    hf_tokenizer = import_reference("transformers").BertTokenizerFast.from_pretrained(minilm_dir)
    preprocessor = QuestionAnsweringPreprocessor(BertTokenizer.from_preset(minilm_dir), **LENGTHS)
    questions, contexts = map(list, zip(*passages()))
    answer_starts = [len(c) // 3 for c in contexts]
    answer_ends = [s + 20 for s in answer_starts]
    features = preprocessor((questions, contexts))
    starts, ends = (np.asarray(t) for t in preprocessor.labels(features, answer_starts, answer_ends))
    encoded = hf_tokenizer(
        questions,
        contexts,
        truncation="only_second",
        max_length=LENGTHS["sequence_length"],
        stride=LENGTHS["doc_stride"],
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
    )
    assert len(encoded["input_ids"]) == len(starts)
    held = 0
    for w, ids in enumerate(encoded["input_ids"]):
        np.testing.assert_array_equal(np.asarray(features["token_ids"])[w, : len(ids)], ids)
        i, sequence_ids = encoded["overflow_to_sample_mapping"][w], encoded.sequence_ids(w)
        offsets = encoded["offset_mapping"][w]
        first = sequence_ids.index(1)
        last = len(sequence_ids) - 1 - sequence_ids[::-1].index(1)
        if not (offsets[first][0] <= answer_starts[i] and offsets[last][1] >= answer_ends[i]):
            expected = (0, 0)
        else:  # prepare_train_features, within the passage.
            start = first
            while start <= last and offsets[start][0] <= answer_starts[i]:
                start += 1
            end = last
            while offsets[end][1] >= answer_ends[i]:
                end -= 1
            expected = (start - 1, end + 1)
            held += 1
        assert (starts[w], ends[w]) == expected
    assert 0 < held < len(starts)


def test_labels_round_trip_to_the_answer_text(minilm_dir):
    preprocessor = QuestionAnsweringPreprocessor(BertTokenizer.from_preset(minilm_dir), **LENGTHS)
    data = docstring_questions()["test"]
    features = preprocessor((data["question"][:20], data["context"][:20]))
    starts = np.array(data["answer_start"][:20])
    ends = starts + np.array([len(t) for t in data["answer_text"][:20]])
    start, end = (np.asarray(t) for t in preprocessor.labels(features, starts, ends))
    for w, i in enumerate(np.asarray(features["example_index"])):
        first, last = features["token_start"][w, start[w]], features["token_end"][w, end[w]]
        assert data["context"][i][int(first) : int(last)] == data["answer_text"][i]


def test_answers_longer_than_the_padded_windows_may_be(minilm_dir):
    """A `max_answer_length` past the windows' padded length (16 here) finds
    the same spans as one within it: every span of a short passage fits both."""
    preprocessor = QuestionAnsweringPreprocessor(BertTokenizer.from_preset(minilm_dir), **LENGTHS)
    contexts = ["It returns the first line.", "A list of names.", ""]
    features = preprocessor((["What does it return?", "What?", "Who?"], contexts))
    assert features["token_ids"].shape[1] == 16
    logits = np.random.default_rng(0).normal(size=(2, *features["token_ids"].shape)).astype("float32")
    spans = [preprocessor.best_spans(features, *logits, contexts, max_answer_length=k) for k in (15, 40)]
    for key in ("answer", "start", "end", "score"):
        np.testing.assert_array_equal(np.asarray(spans[0][key]), np.asarray(spans[1][key]))
    assert spans[1]["answer"].numpy().tolist()[:2] != [b"", b""]


def run_qa_span(start_logits, end_logits, in_passage, real, n_best: int, max_answer_length: int) -> tuple[int, int]:
    """Hugging Face run_qa.py's `postprocess_qa_predictions` in one window: the `n_best` highest start and end logits
    (of its tokens), the pairs in the passage with `start <= end < start + max_answer_length`, the best by the sum of
    the logits (the first on ties, start-major)."""
    starts = [t for t in np.argsort(-np.where(real, start_logits, -np.inf), kind="stable")[:n_best]]
    ends = [t for t in np.argsort(-np.where(real, end_logits, -np.inf), kind="stable")[:n_best]]
    pairs = [(s, e) for s in starts for e in ends if in_passage[s] and in_passage[e] and s <= e < s + max_answer_length]
    return max(sorted(pairs), key=lambda pair: start_logits[pair[0]] + end_logits[pair[1]])


def test_n_best_chooses_among_the_likeliest_starts_and_ends_as_run_qa(minilm_dir):
    """With `n_best`, each one-window passage's span is run_qa.py's on the same logits; without, some differ."""
    preprocessor = QuestionAnsweringPreprocessor(BertTokenizer.from_preset(minilm_dir), **LENGTHS)
    data = docstring_questions()["test"]
    contexts = [c for c in data["context"] if len(c.split()) <= 25][:40]
    features = preprocessor((data["question"][: len(contexts)], contexts))
    assert np.asarray(features["example_index"]).tolist() == list(range(len(contexts)))  # One window each.
    logits = np.random.default_rng(1).normal(size=(2, *features["token_ids"].shape)).astype("float32")
    in_passage, real = np.asarray(features["token_start"]) >= 0, np.asarray(features["padding_mask"]) > 0
    chosen = {}
    for n_best in (3, None):
        spans = preprocessor.best_spans(features, *logits, contexts, max_answer_length=5, n_best=n_best)
        chosen[n_best] = [(int(s), int(e)) for s, e in zip(spans["start"], spans["end"])]
    token_start, token_end = np.asarray(features["token_start"]), np.asarray(features["token_end"])
    found = 0
    for w in range(len(contexts)):
        try:
            s, e = run_qa_span(logits[0][w], logits[1][w], in_passage[w], real[w], 3, 5)
        except ValueError:  # No pair among the 3 best: run_qa.py answers nothing; so does best_spans (a score of -1).
            assert chosen[3][w] == (0, 0)
            continue
        found += 1
        word_start, word_end = np.asarray(features["word_start"])[w, s], np.asarray(features["word_end"])[w, e]
        assert chosen[3][w] == (word_start, word_end), (w, token_start[w, s], token_end[w, e])
    assert found > len(contexts) // 2 and chosen[3] != chosen[None]
