"""NSP pairs made with TensorFlow ops a group of documents at a time, so that `tf.data` pairs groups in parallel."""

from typing import NamedTuple

import tensorflow as tf

from keras_bert3.tokenizers.joined_segments import joined_segments


class DocumentGroupPairer:
    """Turns a group of tokenized documents into BERT pretraining pairs (google-research/bert
    `create_instances_from_document`; `SentencePairer` in tests/data/ is its Python version).

    Per document a target length `sequence_length - 3`, or with probability `short_seq_prob` a uniform one in
    `[2, sequence_length - 3]`; sentences accumulate into a chunk until the target is reached; A takes a random
    number of the chunk's sentences; B is the rest of the chunk (label 0), or a random span of another document of
    the group (label 1, A's unused sentences put back; the original draws from the whole corpus); the longer side
    is truncated first, each token from the front or the back at random. Laid out as `[CLS] A [SEP] B [SEP]`.

    NSP balance: the original makes every single-sentence chunk random-next, so corpora of short documents get fewer
    than 50% true continuations. `balanced_nsp=True` makes the other chunks true continuations with the probability that
    makes each step 50/50 in expectation (at most 1), then drops forced random-next pairs at random until the group is
    even (at most half its examples, none in a group without a true pair). `False` keeps the original's coin flip.

    Args:
        sequence_length: int. Length of a pair, at least 5.
        next_sentence_prediction: bool. Pairs with NSP labels, or single segments `[CLS] A [SEP]`.

    Call args:
        documents: int32 `tf.RaggedTensor` `(documents, sentences, tokens)`, no sentence or document empty.
        seed: int `(2,)` tensor for the stateless random ops.

    Returns:
        A dict: int32 `token_ids` and `segment_ids` `(examples, sequence_length)`, `lengths` and `labels`
        `(examples,)`, and int64 `counts` `(5,)`: documents with a shortened target, examples, random-next
        examples, of those the single-sentence chunks', and the examples dropped for balance.

    Example:
    >>> pairer = DocumentGroupPairer(sequence_length=16, cls_token_id=2, sep_token_id=3, pad_token_id=0)
    >>> documents = tf.ragged.constant([[[5, 6, 7], [8, 9]], [[10, 11], [12]]])
    >>> pairer(documents, tf.constant([0, 1]))["token_ids"].shape
    TensorShape([2, 16])
    """

    def __init__(
        self,
        *,
        sequence_length: int = 128,
        cls_token_id: int,
        sep_token_id: int,
        pad_token_id: int,
        short_seq_prob: float = 0.1,
        next_sentence_prediction: bool = True,
        balanced_nsp: bool = True,
    ):
        if sequence_length < 5:
            raise ValueError(f"sequence_length must be at least 5 ([CLS] a [SEP] b [SEP]), got {sequence_length}.")
        self.sequence_length = int(sequence_length)
        self.cls_token_id = int(cls_token_id)
        self.sep_token_id = int(sep_token_id)
        self.pad_token_id = int(pad_token_id)
        self.short_seq_prob = float(short_seq_prob)
        self.next_sentence_prediction = bool(next_sentence_prediction)
        self.balanced_nsp = bool(balanced_nsp)
        self.max_tokens = self.sequence_length - (3 if self.next_sentence_prediction else 2)

    @classmethod
    def for_tokenizer(cls, tokenizer, **kwargs) -> "DocumentGroupPairer":
        """A pairer with the tokenizer's [CLS], [SEP] and [PAD] ids; `kwargs` as `__init__`."""
        ids = dict(
            cls_token_id=tokenizer.cls_token_id,
            sep_token_id=tokenizer.sep_token_id,
            pad_token_id=tokenizer.pad_token_id,
        )
        return cls(**ids, **kwargs)

    def __call__(self, documents: tf.RaggedTensor, seed) -> dict:
        """Pairs one group: `_step` until every document is used up, then the balance drop."""
        seed = tf.cast(seed, tf.int64)
        group = flat_group(documents)
        targets, short = target_lengths(tf.shape(group.doc_starts)[0], self.max_tokens, self.short_seq_prob, seed)
        _, arrays, _ = tf.while_loop(
            lambda position, *_: tf.reduce_any(position < group.doc_ends),
            lambda position, arrays, iteration: self._step(group, targets, seed, position, arrays, iteration),
            (group.doc_starts, self._example_arrays(), tf.constant(0)),
        )
        examples = [array.concat() for array in arrays]
        dropped = tf.constant(0)
        if self.next_sentence_prediction and self.balanced_nsp:
            examples, dropped = drop_forced_negatives(examples, tf.random.experimental.stateless_fold_in(seed, -3))
        return self._result(examples, short, dropped)

    def _step(self, group: "FlatGroup", targets, seed, position, arrays, iteration):
        """One chunk of every document with sentences left, cut, truncated, joined and written to `arrays`
        at `iteration + 1`; `position` `(documents,)`, each document's next sentence, moves past it."""
        active = tf.where(position < group.doc_ends)[:, 0]  # Documents with sentences left, (n,).
        start = tf.gather(position, active)
        target = tf.gather(targets, active)
        end = chunk_ends(group.cum, start, target, tf.gather(group.doc_ends, active) - 1)
        chunk = end - start + 1  # Sentences in each chunk, (n,).
        key = tf.random.experimental.stateless_fold_in(seed, iteration)
        if self.next_sentence_prediction:
            a_span, b_span, label, keep, next_start = self._nsp_segments(group, active, start, end, target, key)
        else:
            a_span = (tf.gather(group.cum, start), tf.gather(group.cum, end + 1))  # The whole chunk.
            b_span = (a_span[1], a_span[1])
            label, keep, next_start = tf.zeros_like(chunk), tf.ones_like(chunk, tf.bool), end + 1
        a, b = truncated_pair(group.tokens, a_span, b_span, self.max_tokens, key)
        token_ids, segment_ids, lengths = joined_examples(
            a,
            b if self.next_sentence_prediction else None,
            cls_token_id=self.cls_token_id,
            sep_token_id=self.sep_token_id,
            pad_token_id=self.pad_token_id,
            sequence_length=self.sequence_length,
        )
        forced = tf.cast(chunk == 1, tf.int32) * label  # A single sentence has no continuation.
        made = (token_ids, segment_ids, lengths, label, forced)
        arrays = tuple(array.write(iteration + 1, tf.boolean_mask(part, keep)) for array, part in zip(arrays, made))
        position = tf.tensor_scatter_nd_update(position, active[:, None], next_start)
        return position, arrays, iteration + 1

    def _nsp_segments(self, group: "FlatGroup", active, start, end, target, key):
        """Segments A and B of the chunks `[start, end]` as token spans `(first, one past last)`, each
        chunk's label, whether it is kept, and its document's next sentence."""
        draw = lambda i: tf.random.stateless_uniform(  # noqa: E731
            tf.shape(active), tf.random.experimental.stateless_fold_in(key, i)
        )
        cum, chunk = group.cum, end - start + 1
        num_documents = tf.shape(group.doc_starts)[0]
        a_count = a_sentence_counts(chunk, draw(0))
        label, keep = nsp_labels(chunk, draw(1), num_documents, balanced=self.balanced_nsp)
        a_span = (tf.gather(cum, start), tf.gather(cum, start + a_count))
        other = other_documents(tf.cast(active, tf.int32), num_documents, draw(2))
        b_target = target - (a_span[1] - a_span[0])
        span_start, span_end = random_spans(cum, group.doc_starts, group.doc_ends, other, b_target, draw(3))
        random_next = label == 1
        b_span = (
            tf.where(random_next, tf.gather(cum, span_start), a_span[1]),
            tf.where(random_next, tf.gather(cum, span_end + 1), tf.gather(cum, end + 1)),
        )
        next_start = tf.where(random_next, start + a_count, end + 1)
        return a_span, b_span, label, keep, next_start

    @staticmethod
    def _result(examples, short, dropped) -> dict:
        """The call's dict from the examples `(token_ids, segment_ids, lengths, labels, forced)`."""
        token_ids, segment_ids, lengths, labels, forced = examples
        counts = tf.stack(
            [
                tf.reduce_sum(tf.cast(short, tf.int32)),
                tf.size(labels),
                tf.reduce_sum(labels),
                tf.reduce_sum(forced),
                dropped,
            ]
        )
        return {
            "token_ids": token_ids,
            "segment_ids": segment_ids,
            "lengths": lengths,
            "labels": labels,
            "counts": tf.cast(counts, tf.int64),
        }

    def empty(self) -> dict:
        """What a group without documents gives: no example."""
        token_ids, segment_ids, lengths, labels, _ = self._no_examples()
        return {
            "token_ids": token_ids,
            "segment_ids": segment_ids,
            "lengths": lengths,
            "labels": labels,
            "counts": tf.zeros([5], tf.int64),
        }

    def _no_examples(self):
        rows, flags = tf.zeros([0, self.sequence_length], tf.int32), tf.zeros([0], tf.int32)
        return rows, rows, flags, flags, flags

    def _example_arrays(self) -> tuple:
        """One `TensorArray` per example part, element 0 empty, so a group with no example concatenates."""
        return tuple(
            tf.TensorArray(
                tf.int32, size=1, dynamic_size=True, infer_shape=False, element_shape=[None] + part.shape[1:]
            ).write(0, part)
            for part in self._no_examples()
        )


class FlatGroup(NamedTuple):
    """A group of documents laid flat, as the steps read it."""

    tokens: tf.Tensor  # All the group's tokens, int32 (T,).
    cum: tf.Tensor  # cum[j]: tokens before sentence j (the group's sentences in order), int32 (S + 1,).
    doc_starts: tf.Tensor  # Each document's first sentence, int32 (D,).
    doc_ends: tf.Tensor  # One past its last, int32 (D,).


def flat_group(documents: tf.RaggedTensor) -> FlatGroup:
    """`documents` `(documents, sentences, tokens)` laid flat (`FlatGroup`)."""
    sentence_lengths = tf.cast(documents.values.row_lengths(), tf.int32)  # (S,)
    return FlatGroup(
        tokens=documents.flat_values,
        cum=tf.concat([[0], tf.cumsum(sentence_lengths)], axis=0),
        doc_starts=tf.cast(documents.row_splits[:-1], tf.int32),
        doc_ends=tf.cast(documents.row_splits[1:], tf.int32),
    )


def target_lengths(num_documents, max_tokens: int, short_seq_prob: float, seed):
    """Each document's target length, int32 `(documents,)` (the original's `target_seq_length`), and which are short."""
    draw = tf.random.stateless_uniform([num_documents], tf.random.experimental.stateless_fold_in(seed, -1))
    short = draw < short_seq_prob
    short_length = tf.random.stateless_uniform(
        [num_documents], tf.random.experimental.stateless_fold_in(seed, -2), 2, max_tokens + 1, tf.int32
    )
    return tf.where(short, short_length, max_tokens), short


def chunk_ends(cum, start, target, last):
    """The last sentence of each chunk from sentence `start`: the first whose running token total reaches
    `target`, clipped to `[start, last]`. `cum` `(S + 1,)`: tokens before each sentence; the others `(n,)`."""
    reach = tf.searchsorted(cum, tf.gather(cum, start) + target, side="left") - 1
    return tf.clip_by_value(reach, start, last)


def a_sentence_counts(chunk, uniform):
    """Sentences of each chunk for A: uniform in `1 .. chunk - 1` (the original's `randint`), 1 for one sentence."""
    most = tf.maximum(chunk - 1, 1)
    return tf.minimum(1 + tf.cast(uniform * tf.cast(most, tf.float32), tf.int32), most)


def nsp_labels(chunk, uniform, num_documents, *, balanced: bool):
    """Each chunk's label, int32 (0: true continuation, 1: random next), and whether it is kept, bool. A group
    of one document (a pass's last) has no other: its single-sentence chunks are dropped, the rest are true pairs."""
    single = chunk == 1
    p_true = tf.constant(0.5)
    if balanced:  # Expected true continuations = half the step's examples.
        eligible = tf.reduce_sum(tf.cast(~single, tf.float32))
        half = 0.5 * tf.cast(tf.size(chunk), tf.float32)
        p_true = tf.minimum(1.0, tf.math.divide_no_nan(half, eligible))
    alone = tf.convert_to_tensor(num_documents) < 2
    label = tf.cast((single | (uniform >= p_true)) & ~alone, tf.int32)
    return label, ~(single & alone)


def other_documents(documents, num_documents, uniform):
    """Another document of the group for each of `documents` `(n,)`, uniform over the others (alone: itself)."""
    other = tf.cast(uniform * tf.cast(num_documents - 1, tf.float32), tf.int32)
    other = tf.minimum(other, num_documents - 2)
    other = other + tf.cast(other >= documents, tf.int32)  # Skips the document itself.
    return tf.clip_by_value(other, 0, num_documents - 1)


def random_spans(cum, doc_starts, doc_ends, other, target, uniform):
    """Segment B from each document `other` `(n,)`: sentences `[span_start, span_end]` from a random one on,
    till `target` tokens or the document's end."""
    other_start, other_end = tf.gather(doc_starts, other), tf.gather(doc_ends, other)
    span_start = other_start + tf.cast(uniform * tf.cast(other_end - other_start, tf.float32), tf.int32)
    span_start = tf.minimum(span_start, other_end - 1)
    return span_start, chunk_ends(cum, span_start, target, other_end - 1)


def truncation_cuts(length_a, length_b, max_tokens: int):
    """Tokens cut from A and from B, `(n,)` each: the original's `truncate_seq_pair` (the longer side
    loses a token, B on ties, until the pair fits `max_tokens`) in closed form."""
    excess = tf.maximum(length_a + length_b - max_tokens, 0)
    a_longer = length_a > length_b
    first = tf.where(a_longer, tf.minimum(length_a - length_b, excess), tf.minimum(length_b - length_a + 1, excess))
    rest = excess - first  # Then both sides in turn.
    cut_a = tf.where(a_longer, first + rest // 2, (rest + 1) // 2)
    cut_b = tf.where(a_longer, (rest + 1) // 2, first + rest // 2)
    return cut_a, cut_b


def cut_segment(tokens, start, end, cut, seed):
    """Tokens `[start, end)` of each row less `cut`, each from the front or back at random: ragged `(n, tokens)`."""
    counts = tf.cast(cut, tf.float32)
    front = tf.random.stateless_binomial(tf.shape(counts), seed, counts, 0.5, output_dtype=tf.int32)
    kept = tf.ragged.range(start + front, end - (cut - front)).flat_values
    return tf.RaggedTensor.from_row_lengths(tf.gather(tokens, kept), end - start - cut)


def truncated_pair(tokens, a_span, b_span, max_tokens: int, key):
    """Segments A and B (token spans into `tokens`) truncated together to `max_tokens`: two ragged `(n, tokens)`."""
    (a_start, a_end), (b_start, b_end) = a_span, b_span
    cut_a, cut_b = truncation_cuts(a_end - a_start, b_end - b_start, max_tokens)
    a = cut_segment(tokens, a_start, a_end, cut_a, tf.random.experimental.stateless_fold_in(key, 4))
    b = cut_segment(tokens, b_start, b_end, cut_b, tf.random.experimental.stateless_fold_in(key, 5))
    return a, b


def joined_examples(a, b, *, cls_token_id: int, sep_token_id: int, pad_token_id: int, sequence_length: int):
    """`[CLS] A [SEP] B [SEP]` (`b` None: `[CLS] A [SEP]`), padded: int32 `token_ids`, `segment_ids`, `lengths`."""
    segments = [a] if b is None else [a, b]
    return joined_segments(
        segments,
        [segment.row_lengths() for segment in segments],
        cls_token_id=cls_token_id,
        sep_token_id=sep_token_id,
        pad_token_id=pad_token_id,
        sequence_length=sequence_length,
    )


def drop_forced_negatives(examples, seed):
    """Drops forced random-next examples (at random) where the group has more random-next than true
    pairs: at most half the group, none in a group without a true pair. Returns the kept examples and the count."""
    labels, forced = examples[3], examples[4]
    positives = tf.reduce_sum(1 - labels)
    limit = tf.minimum(tf.reduce_sum(forced), tf.size(labels) // 2)
    drop = tf.where(positives > 0, tf.clip_by_value(tf.reduce_sum(labels) - positives, 0, limit), 0)
    # The `drop` forced examples with the lowest draws; the others draw above every forced one.
    draws = tf.where(forced > 0, tf.random.stateless_uniform(tf.shape(labels), seed), 2.0)
    keep = tf.argsort(tf.argsort(draws)) >= drop
    return [tf.boolean_mask(part, keep) for part in examples], drop
