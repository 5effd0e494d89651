"""The pipeline's statistics on real text (the embedded corpus) over >= 10,000
examples, against the numbers google-research/bert's algorithm implies."""

import numpy as np
import pytest
import tensorflow as tf

from keras_bert3.data import DataCounters
from keras_bert3.data import pretraining_dataset
from keras_bert3.data.document_group_pairer import DocumentGroupPairer
from keras_bert3_demo import default_corpus_documents
from tests.data.conftest import collect
from tests.data.sentence_pairer import SentencePairer
from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.masking_config import MaskingConfig
from keras_bert3.data.pairing_config import PairingConfig

pytestmark = pytest.mark.backend_free  # The pipeline is TensorFlow under either backend: one pass.


@pytest.fixture(scope="module")
def run(tokenizer, corpus_path):
    """Three passes (about 14,000 examples) with a cap that never binds."""
    counters = DataCounters()
    dataset = pretraining_dataset(
        corpus_path,
        tokenizer,
        masking=MaskingConfig(max_predictions_per_seq=40),
        batching=BatchingConfig(batch_size=256),
        seed=7,
        counters=counters,
    )
    return collect(dataset, passes=3), counters


def original_tokens(data):
    ids = data["token_ids"].copy()
    rows, _ = np.nonzero(data["mask_weights"])
    ids[rows, data["mask_positions"][data["mask_weights"] > 0]] = data["y_mlm"][data["mask_weights"] > 0]
    return ids


@pytest.mark.slow
def test_selection_and_replacement(run, tokenizer):
    data, _ = run
    assert len(data["token_ids"]) >= 10_000
    weights = data["mask_weights"] > 0
    real_tokens = data["padding_mask"].sum() - 3 * len(weights)  # Less [CLS] and two [SEP].
    assert abs(weights.sum() / real_tokens - 0.15) < 0.005

    chosen = np.take_along_axis(data["token_ids"], data["mask_positions"], axis=1)[weights]
    original = data["y_mlm"][weights]
    as_mask = np.mean(chosen == tokenizer.mask_token_id)
    kept = np.mean(chosen == original)
    assert abs(as_mask - 0.8) < 0.01 and abs(kept - 0.1) < 0.01 and abs(1 - as_mask - kept - 0.1) < 0.01
    random_tokens = chosen[(chosen != original) & (chosen != tokenizer.mask_token_id)]
    assert not np.isin(random_tokens, tokenizer.special_token_ids).any()


@pytest.mark.slow
def test_no_special_token_selected(run, tokenizer):
    data, _ = run
    weights = data["mask_weights"] > 0
    assert not np.isin(
        data["y_mlm"][weights], [tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id]
    ).any()
    lengths = data["padding_mask"].sum(axis=1, keepdims=True)
    assert (data["mask_positions"][weights] < np.broadcast_to(lengths, weights.shape)[weights]).all()
    padded = np.where(weights, data["mask_positions"], 10**6 + np.arange(weights.shape[1]))
    assert (np.diff(padded, axis=1) > 0).all()  # Sorted, distinct, padding last.


def test_nsp_and_short_sequences(run):
    data, counters = run
    labels = data["y_nsp"]
    assert counters.examples == len(labels) and counters.random_next == labels.sum()
    # Balanced: half true continuations, although a chunk of one sentence is always random next.
    assert abs(np.mean(labels == 0) - 0.5) < 0.02 and counters.forced_random_next > 0.05 * len(labels)
    assert abs(counters.shortened_documents / counters.documents - 0.1) < 0.03
    # Segment ids: 0 up to the first [SEP], then 1 up to the second.
    assert (data["segment_ids"][:, 0] == 0).all() and (data["segment_ids"].max(axis=1) == 1).all()


@pytest.mark.slow
def test_original_nsp_coin_flip(tokenizer, corpus_path):
    """balanced_nsp=False: the original's coin flip where it makes one (a chunk of
    two or more sentences), so fewer than half the pairs are true continuations."""
    counters = DataCounters()
    data = collect(
        pretraining_dataset(
            corpus_path,
            tokenizer,
            PairingConfig(balanced_nsp=False),
            batching=BatchingConfig(batch_size=256),
            seed=5,
            counters=counters,
        )
    )
    labels = data["y_nsp"]
    eligible = len(labels) - counters.forced_random_next
    assert len(labels) > 4_000 and abs(np.sum(labels == 0) / eligible - 0.5) < 0.02
    assert np.mean(labels == 0) < 0.47


def traced_corpus(tokenizer):
    """The embedded corpus with each token replaced by a unique id (its place in
    the corpus, from 1000 on), so that every pair can be traced; and the
    document of each id."""
    documents = default_corpus_documents()
    sentence_lengths = tokenizer.tokenize([s for d in documents for s in d]).row_lengths().numpy()
    token_position, sentence, document_of = 1000, 0, []  # Ids >= 1000 avoid the special ids below.
    traced = []
    for d, document in enumerate(documents):
        traced_document = []
        for _ in document:
            n = int(sentence_lengths[sentence])
            sentence += 1
            if n:
                traced_document.append(np.arange(token_position, token_position + n, dtype=np.int32))
                document_of.extend([d] * n)
                token_position += n
        traced.append(traced_document)
    return traced, np.array(document_of)


def check_pairs(token_ids, segment_ids, labels, document_of):
    """Each segment is one contiguous span of one document; a true pair's B
    follows its A in the same document; a random pair's B is from another."""
    in_a = (segment_ids == 0) & (token_ids >= 1000)  # (examples, seq)
    in_b = (segment_ids == 1) & (token_ids >= 1000)
    documents = np.where(token_ids >= 1000, document_of[np.maximum(token_ids - 1000, 0)], -1)
    steps = np.diff(token_ids, axis=1)
    for inside in (in_a, in_b):  # Each segment is one contiguous span of one document.
        both = inside[:, 1:] & inside[:, :-1]
        assert (steps[both] == 1).all() and inside.any(axis=1).all()
    rows = np.arange(len(labels))
    length_a, length_b = in_a.sum(axis=1), in_b.sum(axis=1)
    first_a, last_a = token_ids[:, 1], token_ids[rows, length_a]
    first_b = token_ids[rows, length_a + 2]
    doc_a, doc_b = documents[:, 1], documents[rows, length_a + 2]
    positive = labels == 0
    assert (doc_a[positive] == doc_b[positive]).all() and (first_b[positive] > last_a[positive]).all()
    untruncated = positive & (length_a + length_b < 125)  # B starts right after A.
    assert (first_b[untruncated] == last_a[untruncated] + 1).all()
    assert (doc_a[~positive] != doc_b[~positive]).all()
    assert (first_a >= 1000).all()


@pytest.mark.slow
def test_pairs_come_from_the_right_documents(tokenizer):
    traced, document_of = traced_corpus(tokenizer)
    pairer = DocumentGroupPairer(sequence_length=128, cls_token_id=1, sep_token_id=2, pad_token_id=0)
    pair = tf.function(pairer, reduce_retracing=True)  # In a graph, as the pipeline's map runs it.
    count = 0
    for start in range(0, len(traced), 200):
        documents = traced[start : start + 200]
        sentences = [sentence for document in documents for sentence in document]
        group = tf.RaggedTensor.from_nested_row_lengths(
            np.concatenate(sentences), [[len(d) for d in documents], [len(s) for s in sentences]]
        )  # (documents, sentences, tokens)
        pairs = pair(group, tf.constant([3, start]))
        check_pairs(pairs["token_ids"].numpy(), pairs["segment_ids"].numpy(), pairs["labels"].numpy(), document_of)
        count += len(pairs["labels"])
    assert count > 4_000


def test_python_pairs_come_from_the_right_documents(tokenizer):
    """The same for `SentencePairer`, the original's algorithm in Python."""
    traced, document_of = traced_corpus(tokenizer)
    pairer = SentencePairer(sequence_length=128, cls_token_id=1, sep_token_id=2, pad_token_id=0, reservoir_size=200)
    count = 0
    for token_ids, segment_ids, lengths, labels in pairer.examples([traced], seed=3):
        check_pairs(token_ids, segment_ids, labels, document_of)
        count += len(labels)
    assert count > 4_000


@pytest.mark.slow
def test_whole_word_masking_never_splits_a_word(tokenizer, corpus_path):
    dataset = pretraining_dataset(
        corpus_path,
        tokenizer,
        masking=MaskingConfig(whole_word_masking=True),
        batching=BatchingConfig(batch_size=256),
        seed=1,
    )
    data = collect(dataset)
    original = original_tokens(data)
    selected = np.zeros_like(original, dtype=bool)
    rows, _ = np.nonzero(data["mask_weights"])
    selected[rows, data["mask_positions"][data["mask_weights"] > 0]] = True
    vocabulary = np.array(tokenizer.get_vocabulary())
    piece = np.char.startswith(vocabulary[original], "##")
    special = np.isin(original, [tokenizer.cls_token_id, tokenizer.sep_token_id]) | (data["padding_mask"] == 0)
    # A "##" piece after a real token belongs to its word: both are selected or neither.
    joined = piece[:, 1:] & ~special[:, 1:] & ~special[:, :-1]
    assert joined.sum() > 10_000 and selected.sum() > 50_000
    assert (selected[:, 1:][joined] == selected[:, :-1][joined]).all()
    assert abs(selected.sum() / (data["padding_mask"].sum() - 3 * len(original)) - 0.15) < 0.01
