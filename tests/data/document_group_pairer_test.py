"""Each step of `DocumentGroupPairer` on its own, against the loops of
google-research/bert `create_pretraining_data.py` it follows
(`create_instances_from_document`, `truncate_seq_pair`), written out here in
plain Python; and the whole pairer against the original's chunking."""

import numpy as np
import pytest
import tensorflow as tf

from keras_bert3.data import document_group_pairer as steps
from keras_bert3.data.document_group_pairer import DocumentGroupPairer
from keras_bert3_demo import default_corpus_documents

pytestmark = pytest.mark.backend_free  # TensorFlow ops under either backend: one pass.


def original_chunk_end(lengths, start, target, last):
    """`create_instances_from_document`'s accumulation: sentences from `start`
    join the chunk until its length reaches `target` or the document ends."""
    total = 0
    for i in range(start, last + 1):
        total += lengths[i]
        if i == last or total >= target:
            return i


def original_cuts(length_a, length_b, max_tokens):
    """`truncate_seq_pair`'s loop, counting the tokens each side loses."""
    cut_a = cut_b = 0
    while (length_a - cut_a) + (length_b - cut_b) > max_tokens:
        if length_a - cut_a > length_b - cut_b:
            cut_a += 1
        else:
            cut_b += 1
    return cut_a, cut_b


def random_group(rng, documents=12):
    """Sentence lengths of `documents` documents of 1 to 8 sentences; the flat
    layout (`cum`, document starts and ends) as `flat_group` makes it."""
    counts = rng.integers(1, 9, size=documents)
    lengths = rng.integers(1, 30, size=counts.sum())
    sentences = [np.arange(n, dtype=np.int32) for n in lengths]
    group = tf.RaggedTensor.from_nested_row_lengths(np.concatenate(sentences), [counts, lengths])
    return lengths, steps.flat_group(group)


def test_flat_group_lays_out_sentences_and_documents():
    documents = tf.ragged.constant([[[5, 6, 7], [8, 9]], [[10, 11], [12]]])
    group = steps.flat_group(documents)
    np.testing.assert_array_equal(group.tokens, [5, 6, 7, 8, 9, 10, 11, 12])
    np.testing.assert_array_equal(group.cum, [0, 3, 5, 7, 8])
    np.testing.assert_array_equal(group.doc_starts, [0, 2])
    np.testing.assert_array_equal(group.doc_ends, [2, 4])


def test_target_lengths_are_full_or_uniformly_short():
    documents, max_tokens = 40_000, 10
    targets, short = steps.target_lengths(documents, max_tokens, 0.1, tf.constant([4, 2], tf.int64))
    targets, short = targets.numpy(), short.numpy()
    assert abs(short.mean() - 0.1) < 0.006  # 4 standard deviations.
    assert (targets[~short] == max_tokens).all()
    counts = np.bincount(targets[short], minlength=max_tokens + 1)
    assert counts[:2].sum() == 0  # The original's randint(2, max_num_tokens), both ends included.
    expected = short.sum() / (max_tokens - 1)
    assert (np.abs(counts[2:] - expected) < 4 * np.sqrt(expected)).all(), counts
    again, _ = steps.target_lengths(documents, max_tokens, 0.1, tf.constant([4, 2], tf.int64))
    other, _ = steps.target_lengths(documents, max_tokens, 0.1, tf.constant([4, 3], tf.int64))
    np.testing.assert_array_equal(again, targets)
    assert not np.array_equal(other, targets)


def test_chunk_ends_follow_the_original_accumulation():
    rng = np.random.default_rng(0)
    lengths, group = random_group(rng, documents=30)
    starts, targets, lasts = [], [], []
    for document_start, document_end in zip(group.doc_starts.numpy(), group.doc_ends.numpy()):
        for start in range(document_start, document_end):
            for target in (-3, 0, 1, 2, 17, 40, 128):
                starts.append(start), targets.append(target), lasts.append(document_end - 1)
    ends = steps.chunk_ends(group.cum, tf.constant(starts), tf.constant(targets), tf.constant(lasts)).numpy()
    expected = [original_chunk_end(lengths, *arguments) for arguments in zip(starts, targets, lasts)]
    np.testing.assert_array_equal(ends, expected)


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 8])
def test_a_sentence_counts_are_uniform_over_one_to_chunk_minus_one(chunk):
    draws = 60 * max(chunk - 1, 1)
    uniform = (np.arange(draws, dtype=np.float32) + 0.5) / draws  # Evenly spread draws in [0, 1).
    uniform = np.append(uniform, [0.0, np.nextafter(np.float32(1), np.float32(0))])  # The ends.
    counts = steps.a_sentence_counts(tf.fill([len(uniform)], chunk), tf.constant(uniform, tf.float32)).numpy()
    if chunk == 1:
        assert (counts == 1).all()
    else:  # The original's randint(1, len(current_chunk) - 1): every value equally often.
        values, times = np.unique(counts[:-2], return_counts=True)
        np.testing.assert_array_equal(values, np.arange(1, chunk))
        assert (times == 60).all()
        np.testing.assert_array_equal(counts[-2:], [1, chunk - 1])


def nsp_draws(singles: float, n=50_000, seed=1):
    rng = np.random.default_rng(seed)
    chunk = np.where(rng.random(n) < singles, 1, rng.integers(2, 6, size=n)).astype(np.int32)
    return tf.constant(chunk), tf.random.stateless_uniform([n], [seed, 0])


def test_nsp_labels_flip_a_coin_for_chunks_with_a_continuation():
    chunk, uniform = nsp_draws(singles=0.3)
    labels, keep = steps.nsp_labels(chunk, uniform, 10, balanced=False)
    labels, single = labels.numpy(), chunk.numpy() == 1
    assert keep.numpy().all() and (labels[single] == 1).all()  # No continuation: always random next.
    assert abs(np.mean(labels[~single] == 0) - 0.5) < 0.01


@pytest.mark.parametrize("singles", [0.0, 0.3, 0.7])
def test_balanced_nsp_labels_are_half_true_continuations(singles):
    chunk, uniform = nsp_draws(singles)
    labels, keep = steps.nsp_labels(chunk, uniform, 10, balanced=True)
    labels, single = labels.numpy(), chunk.numpy() == 1
    assert keep.numpy().all() and (labels[single] == 1).all()
    if singles < 0.5:
        assert abs(np.mean(labels == 0) - 0.5) < 0.01
    else:  # Not enough chunks with a continuation: each of them is one.
        assert (labels[~single] == 0).all()


def test_a_group_of_one_document_drops_single_sentences_and_keeps_true_pairs():
    chunk, uniform = nsp_draws(singles=0.5, n=1000)
    labels, keep = steps.nsp_labels(chunk, uniform, 1, balanced=True)
    np.testing.assert_array_equal(keep, chunk.numpy() > 1)
    assert (labels.numpy() == 0).all()


@pytest.mark.parametrize("num_documents", [1, 2, 7])
def test_other_documents_are_uniform_over_the_others(num_documents):
    per_other = 50
    draws = per_other * max(num_documents - 1, 1)
    uniform = (np.arange(draws, dtype=np.float32) + 0.5) / draws
    for document in range(num_documents):
        other = steps.other_documents(
            tf.fill([draws], document), num_documents, tf.constant(uniform, tf.float32)
        ).numpy()
        if num_documents == 1:
            assert (other == 0).all()  # No other: the pair is made a true one (`nsp_labels`).
            continue
        values, times = np.unique(other, return_counts=True)
        np.testing.assert_array_equal(values, [d for d in range(num_documents) if d != document])
        assert (times == per_other).all()


def test_random_spans_follow_the_original_loop_from_a_uniform_sentence():
    rng = np.random.default_rng(2)
    lengths, group = random_group(rng, documents=20)
    starts, ends = group.doc_starts.numpy(), group.doc_ends.numpy()
    for target in (-2, 1, 10, 60):
        for other in range(len(starts)):
            sentences = ends[other] - starts[other]
            draws = 20 * sentences
            uniform = (np.arange(draws, dtype=np.float32) + 0.5) / draws
            span_start, span_end = steps.random_spans(
                group.cum, group.doc_starts, group.doc_ends, tf.fill([draws], other), tf.fill([draws], target), uniform
            )
            # The original's randint(0, len(random_document) - 1): every sentence equally often.
            values, times = np.unique(span_start.numpy(), return_counts=True)
            np.testing.assert_array_equal(values, np.arange(starts[other], ends[other]))
            assert (times == 20).all()
            expected = [original_chunk_end(lengths, s, target, ends[other] - 1) for s in span_start.numpy()]
            np.testing.assert_array_equal(span_end, expected)


def test_truncation_cuts_match_truncate_seq_pair():
    length_a, length_b = np.meshgrid(np.arange(1, 41), np.arange(0, 41))  # B empty: single segments.
    length_a, length_b = length_a.ravel(), length_b.ravel()
    for max_tokens in (2, 5, 29, 61):
        cut_a, cut_b = steps.truncation_cuts(tf.constant(length_a), tf.constant(length_b), max_tokens)
        expected = np.array([original_cuts(a, b, max_tokens) for a, b in zip(length_a, length_b)])
        np.testing.assert_array_equal(cut_a, expected[:, 0])
        np.testing.assert_array_equal(cut_b, expected[:, 1])


@pytest.mark.slow
def test_cut_segment_takes_each_cut_token_from_the_front_or_the_back():
    tokens = tf.range(1000, 1100, dtype=tf.int32)
    rows = 4000
    rng = np.random.default_rng(3)
    start = rng.integers(0, 40, size=rows).astype(np.int32)
    end = start + rng.integers(1, 50, size=rows).astype(np.int32)
    cut = (rng.random(rows) * (end - start)).astype(np.int32)  # Leaves at least one token.
    kept = steps.cut_segment(tokens, start, end, cut, tf.constant([5, 6], tf.int64))
    fronts = []
    for row, (s, e, c) in enumerate(zip(start, end, cut)):
        segment = kept[row].numpy()
        front = segment[0] - 1000 - s
        assert 0 <= front <= c
        np.testing.assert_array_equal(segment, np.arange(1000 + s + front, 1000 + e - (c - front)))
        fronts.append(front)
    fronts = np.array(fronts)  # The original: each cut token from the front with probability 1/2.
    assert abs(fronts.sum() / cut.sum() - 0.5) < 4 * 0.5 / np.sqrt(cut.sum())
    assert ((fronts > 0) & (fronts < cut)).mean() > 0.5  # Both ends at once, not all from one.


@pytest.mark.parametrize("with_b", [True, False])
def test_joined_examples_are_cls_a_sep_b_sep(with_b):
    rng = np.random.default_rng(4)
    segments_a = [list(rng.integers(10, 99, size=n)) for n in (1, 5, 3, 12)]
    segments_b = [list(rng.integers(10, 99, size=n)) for n in (2, 1, 9, 1)]
    a, b = tf.ragged.constant(segments_a, tf.int32), tf.ragged.constant(segments_b, tf.int32)
    token_ids, segment_ids, lengths = steps.joined_examples(
        a, b if with_b else None, cls_token_id=2, sep_token_id=3, pad_token_id=0, sequence_length=20
    )
    for row, (tokens_a, tokens_b) in enumerate(zip(segments_a, segments_b)):
        tokens = [2, *tokens_a, 3] + ([*tokens_b, 3] if with_b else [])
        segments = [0] * (len(tokens_a) + 2) + ([1] * (len(tokens_b) + 1) if with_b else [])
        np.testing.assert_array_equal(token_ids[row], tokens + [0] * (20 - len(tokens)))
        np.testing.assert_array_equal(segment_ids[row], segments + [0] * (20 - len(segments)))
        assert lengths[row] == len(tokens)


def forced_examples(labels, forced):
    """Examples whose token ids number them, with the given labels and forced flags."""
    n = len(labels)
    numbered = tf.range(n)[:, None]
    return [numbered, numbered, tf.range(n), tf.constant(labels, tf.int32), tf.constant(forced, tf.int32)]


@pytest.mark.parametrize(
    "labels, forced, expected_drop",
    [
        ([0, 1, 1, 1, 1, 1], [0, 1, 1, 1, 0, 0], 3),  # 5 random next against 1 true: drops 3 of the 3 forced.
        ([0, 0, 1, 1, 1, 1, 1, 1], [0, 0, 1, 1, 1, 1, 1, 1], 4),  # Even at 4 each: 4 of the 6 forced.
        ([0, 1, 1, 1, 1, 1, 1, 1, 1, 1], [0] + [1] * 9, 5),  # 8 to drop, but at most half the group.
        ([1, 1, 1], [1, 1, 1], 0),  # No true pair: nothing to balance with.
        ([0, 0, 1], [0, 0, 1], 0),  # Already more true pairs.
    ],
)
def test_drop_forced_negatives_balances_the_group(labels, forced, expected_drop):
    examples = forced_examples(labels, forced)
    dropped_sets = set()
    for seed in range(20):
        kept, drop = steps.drop_forced_negatives(examples, tf.constant([seed, 0], tf.int64))
        assert int(drop) == expected_drop
        index = kept[2].numpy()
        assert len(index) == len(labels) - expected_drop and (np.diff(index) > 0).all()  # In order.
        dropped = sorted(set(range(len(labels))) - set(index))
        assert all(forced[i] for i in dropped)  # Only forced random-next pairs go.
        for part in kept[:2]:
            np.testing.assert_array_equal(part.numpy()[:, 0], index)
        np.testing.assert_array_equal(kept[3], np.array(labels)[index])
        dropped_sets.add(tuple(dropped))
    if 0 < expected_drop < sum(forced):
        assert len(dropped_sets) > 1  # Which ones: at random.


def corpus_group(tokenizer, documents=60):
    """The first `documents` documents of the embedded corpus, tokenized: ragged
    `(documents, sentences, tokens)` without empty sentences."""
    texts = default_corpus_documents()[:documents]
    ids = iter(tokenizer.tokenize(tf.constant([s for d in texts for s in d])).to_list())
    tokenized = [[s for s in (next(ids) for _ in d) if s] for d in texts]
    return tf.ragged.constant([d for d in tokenized if d], tf.int32)


@pytest.mark.slow
def test_single_segments_are_the_original_chunks_in_step_order(tokenizer):
    """Without NSP or short targets the pairer draws nothing but the
    truncation ends: its examples are the original's chunks (each truncated
    to a window of itself), step by step, each step in document order."""
    group = corpus_group(tokenizer)
    pairer = DocumentGroupPairer(
        sequence_length=64,
        cls_token_id=101,
        sep_token_id=102,
        pad_token_id=0,
        short_seq_prob=0.0,
        next_sentence_prediction=False,
    )
    made = pairer(group, tf.constant([1, 2]))
    max_tokens = 62
    chunks = []  # (step, document, tokens) from the original loop.
    for d, document in enumerate(group.to_list()):
        chunk, step = [], 0
        for i, sentence in enumerate(document):
            chunk += sentence
            if i == len(document) - 1 or len(chunk) >= max_tokens:
                chunks.append((step, d, chunk))
                chunk, step = [], step + 1
    chunks.sort(key=lambda item: item[:2])
    assert len(made["labels"]) == len(chunks) > 100
    for row, (_, _, tokens) in enumerate(chunks):
        length = int(made["lengths"][row])
        example = made["token_ids"][row].numpy()
        assert length == min(len(tokens), max_tokens) + 2 and example[0] == 101 and example[length - 1] == 102
        window = list(example[1 : length - 1])  # A window of the chunk: truncated at either end.
        assert any(tokens[f : f + len(window)] == window for f in range(len(tokens) - len(window) + 1))
    assert (made["labels"].numpy() == 0).all() and (made["segment_ids"].numpy() == 0).all()


def test_nsp_segments_follow_the_original_a_and_b():
    """One step's segments, as token spans: A the chunk's first sentences;
    B the rest of the chunk (label 0, the chunk consumed) or, from another
    document, the original's random span for `target - len(A)` tokens
    (label 1, A's unused sentences put back)."""
    rng = np.random.default_rng(5)
    lengths, group = random_group(rng, documents=200)
    cum, starts, ends = group.cum.numpy(), group.doc_starts.numpy(), group.doc_ends.numpy()
    pairer = DocumentGroupPairer(sequence_length=64, cls_token_id=1, sep_token_id=2, pad_token_id=0)
    active = tf.range(200, dtype=tf.int64)
    target = tf.constant(rng.integers(2, 62, size=200), tf.int32)
    end = steps.chunk_ends(group.cum, group.doc_starts, target, group.doc_ends - 1)
    a_span, b_span, labels, keep, next_start = pairer._nsp_segments(
        group, active, group.doc_starts, end, target, tf.constant([7, 8], tf.int64)
    )
    assert keep.numpy().all() and 0.3 < labels.numpy().mean() < 0.7
    for d, label in enumerate(labels.numpy()):
        start, last = starts[d], int(end[d])
        a_count = list(cum).index(int(a_span[1][d])) - start
        assert a_span[0][d] == cum[start] and 1 <= a_count <= max(last - start, 1)
        if label == 0:
            assert last > start and (b_span[0][d], b_span[1][d]) == (cum[start + a_count], cum[last + 1])
            assert next_start[d] == last + 1
            continue
        assert next_start[d] == start + a_count
        b_first = list(cum).index(int(b_span[0][d]))  # B starts at a sentence of another document.
        other = np.searchsorted(ends, b_first, side="right")
        assert other != d and starts[other] <= b_first < ends[other]
        b_target = int(target[d]) - int(a_span[1][d] - a_span[0][d])
        b_last = original_chunk_end(lengths, b_first, b_target, ends[other] - 1)
        assert b_span[1][d] == cum[b_last + 1]
