"""Sentence pairs for next sentence prediction made with TensorFlow ops, a
group of documents at a time, so that `tf.data` runs groups in parallel on
every core (google-research/bert `create_instances_from_document`)."""

import tensorflow as tf


class DocumentGroupPairer:
    """Turns a group of tokenized documents into packed BERT pretraining pairs.

    The algorithm of google-research/bert `create_instances_from_document`
    (and of `SentencePairer`, its Python version in tests/data/): per document a target
    length `sequence_length - 3`, or with probability `short_seq_prob` a
    uniform one in `[2, sequence_length - 3]`; sentences accumulate into a
    chunk until the target is reached; A takes a random number of the chunk's
    sentences; B is the true continuation (the rest of the chunk) or a random
    span of another document, with A's unused sentences put back; truncation
    longer side first, each token from the front or the back at random.
    Packed as `[CLS] A [SEP] B [SEP]`. Label 0: B is the true continuation;
    1: B is from another document (the original's convention).

    The other document is drawn uniformly from the other documents of the
    same group (the original draws from the whole corpus in memory), never
    the document itself. Every chunk of every document of the group advances
    in one vectorised step, so the work per example is a few tensor ops.

    NSP balance: the original makes every chunk of a single sentence a
    random-next pair (it has no continuation), so corpora of short documents
    get fewer than 50% true continuations. With `balanced_nsp=True` the chunks of
    two or more sentences are true continuations with the probability that
    makes each step's labels 50/50 in expectation (at most 1); where that is
    not enough, forced random-next pairs are dropped at random until the group
    is even (at most half its examples, none in a group without a true pair).
    Every true pair stays a true continuation, every random one comes from
    another document. `False` keeps the original's coin flip.

    Args:
        sequence_length: int. Packed length, at least 5.
        cls_token_id, sep_token_id, pad_token_id: int. The special ids.
        short_seq_prob: float. Probability of a shortened target length.
        next_sentence_prediction: bool. Pairs with NSP labels, or single
            segments `[CLS] A [SEP]` of up to `sequence_length - 2` tokens.
        balanced_nsp: bool. 50% true continuations on any corpus.

    Call args:
        documents: int32 `tf.RaggedTensor` `(documents, sentences, tokens)`,
            every sentence and document non-empty.
        seed: int `(2,)` tensor for the stateless random ops.

    Returns:
        A dict: int32 `token_ids` and `segment_ids` `(examples, sequence_length)`,
        `lengths` and `labels` `(examples,)`, and `counts`, int64 `(5,)`:
        documents with a shortened target, examples, random-next examples,
        of those the ones whose chunk was a single sentence, and the examples
        dropped for balance.

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
        seed = tf.cast(seed, tf.int64)
        tokens = documents.flat_values  # All the group's tokens, (T,).
        sentence_lengths = tf.cast(documents.values.row_lengths(), tf.int32)  # (S,)
        # cum[j]: tokens before sentence j (the group's sentences in order), (S + 1,).
        cum = tf.concat([[0], tf.cumsum(sentence_lengths)], axis=0)
        doc_starts = tf.cast(documents.row_splits[:-1], tf.int32)  # First sentence of each document.
        doc_ends = tf.cast(documents.row_splits[1:], tf.int32)  # One past its last.
        num_documents = tf.shape(doc_starts)[0]

        # One target length per document, as the original (one draw per document).
        draw = tf.random.stateless_uniform([num_documents], tf.random.experimental.stateless_fold_in(seed, -1))
        short = draw < self.short_seq_prob
        short_length = tf.random.stateless_uniform(
            [num_documents], tf.random.experimental.stateless_fold_in(seed, -2), 2, self.max_tokens + 1, tf.int32
        )
        targets = tf.where(short, short_length, self.max_tokens)

        def chunk_end(start, target, last):
            """The last sentence of the chunk from sentence `start`: the first whose
            running total reaches `target`, at most `last`."""
            reach = tf.searchsorted(cum, tf.gather(cum, start) + target, side="left") - 1
            return tf.clip_by_value(reach, start, last)

        def step(position, outputs, iteration):
            active = tf.where(position < doc_ends)[:, 0]  # Documents with sentences left.
            start = tf.gather(position, active)
            target = tf.gather(targets, active)
            last = tf.gather(doc_ends, active) - 1
            end = chunk_end(start, target, last)
            chunk = end - start + 1  # Sentences in the chunk.
            key = tf.random.experimental.stateless_fold_in(seed, iteration)
            uniform = lambda i, shape=None: tf.random.stateless_uniform(  # noqa: E731
                tf.shape(active) if shape is None else shape, tf.random.experimental.stateless_fold_in(key, i)
            )
            keep = tf.ones_like(chunk, tf.bool)
            if not self.next_sentence_prediction:
                a_end = chunk
                label = tf.zeros_like(chunk)
            else:
                # A: a uniform 1 .. chunk - 1 of the chunk's sentences (1 for a single one).
                a_end = 1 + tf.cast(uniform(0) * tf.cast(tf.maximum(chunk - 1, 1), tf.float32), tf.int32)
                a_end = tf.minimum(a_end, tf.maximum(chunk - 1, 1))
                single = chunk == 1
                p_true = tf.constant(0.5)
                if self.balanced_nsp:
                    # Expected true continuations = half the step's examples.
                    eligible = tf.reduce_sum(tf.cast(~single, tf.float32))
                    half = 0.5 * tf.cast(tf.size(chunk), tf.float32)
                    p_true = tf.minimum(1.0, tf.math.divide_no_nan(half, eligible))
                # A group of one document (the last of a pass) has no other
                # document: its single-sentence chunks are dropped, the rest are true pairs.
                alone = num_documents < 2
                label = tf.cast((single | (uniform(1) >= p_true)) & ~alone, tf.int32)
                keep = ~(single & alone)
            a_start_token = tf.gather(cum, start)
            a_end_token = tf.gather(cum, start + a_end)
            if self.next_sentence_prediction:
                # B, true continuation: the rest of the chunk.
                b_start_token = a_end_token
                b_end_token = tf.gather(cum, end + 1)
                # B, random next: another document of the group, from a random sentence on,
                # until target - len(A) tokens.
                group_index = tf.cast(active, tf.int32)
                other = tf.cast(uniform(2) * tf.cast(num_documents - 1, tf.float32), tf.int32)
                other = tf.minimum(other, num_documents - 2)
                other = other + tf.cast(other >= group_index, tf.int32)
                other = tf.clip_by_value(other, 0, num_documents - 1)  # A group of one: see `alone`.
                other_start, other_end = tf.gather(doc_starts, other), tf.gather(doc_ends, other)
                span_start = other_start + tf.cast(uniform(3) * tf.cast(other_end - other_start, tf.float32), tf.int32)
                span_start = tf.minimum(span_start, other_end - 1)
                span_end = chunk_end(span_start, target - (a_end_token - a_start_token), other_end - 1)
                random_next = label == 1
                b_start_token = tf.where(random_next, tf.gather(cum, span_start), b_start_token)
                b_end_token = tf.where(random_next, tf.gather(cum, span_end + 1), b_end_token)
                # Unused sentences go back to the document; a true pair consumes the chunk.
                next_start = tf.where(random_next, start + a_end, end + 1)
            else:
                b_start_token = b_end_token = a_end_token
                next_start = end + 1
            # Truncation to max_tokens: the longer side loses a token (B on ties), each
            # from the front or the back at random; in closed form.
            length_a = a_end_token - a_start_token
            length_b = b_end_token - b_start_token
            excess = tf.maximum(length_a + length_b - self.max_tokens, 0)
            a_longer = length_a > length_b
            first = tf.where(
                a_longer, tf.minimum(length_a - length_b, excess), tf.minimum(length_b - length_a + 1, excess)
            )
            rest = excess - first
            cut_a = tf.where(a_longer, first + rest // 2, (rest + 1) // 2)
            cut_b = tf.where(a_longer, (rest + 1) // 2, first + rest // 2)
            if not self.next_sentence_prediction:
                cut_a, cut_b = excess, tf.zeros_like(excess)
            front_a = self._binomial(cut_a, tf.random.experimental.stateless_fold_in(key, 4))
            front_b = self._binomial(cut_b, tf.random.experimental.stateless_fold_in(key, 5))
            a = tf.RaggedTensor.from_row_lengths(
                tf.gather(
                    tokens, tf.ragged.range(a_start_token + front_a, a_end_token - (cut_a - front_a)).flat_values
                ),
                length_a - cut_a,
            )
            b = tf.RaggedTensor.from_row_lengths(
                tf.gather(
                    tokens, tf.ragged.range(b_start_token + front_b, b_end_token - (cut_b - front_b)).flat_values
                ),
                length_b - cut_b,
            )
            rows = tf.shape(active)[0]
            column = lambda value: tf.fill([rows, 1], value)  # noqa: E731
            parts = [column(self.cls_token_id), a, column(self.sep_token_id)]
            segments = [tf.zeros_like(parts[0]), tf.zeros_like(a), tf.zeros_like(parts[2])]
            if self.next_sentence_prediction:
                parts += [b, column(self.sep_token_id)]
                segments += [tf.ones_like(b), tf.ones([rows, 1], tf.int32)]
            packed = tf.concat(parts, axis=1)
            shape = [rows, self.sequence_length]
            made = (
                packed.to_tensor(self.pad_token_id, shape=shape),
                tf.concat(segments, axis=1).to_tensor(0, shape=shape),
                tf.cast(packed.row_lengths(), tf.int32),
                label,
                tf.cast(chunk == 1, tf.int32) * label,  # Forced: a single sentence has no continuation.
            )
            outputs = tuple(
                array.write(iteration + 1, tf.boolean_mask(part, keep)) for array, part in zip(outputs, made)
            )
            position = tf.tensor_scatter_nd_update(position, active[:, None], next_start)
            return position, outputs, iteration + 1

        # Element 0 is empty, so that concatenating works for a group with no example.
        arrays = tuple(
            tf.TensorArray(
                tf.int32, size=1, dynamic_size=True, infer_shape=False, element_shape=[None] + part.shape[1:]
            ).write(0, part)
            for part in self._no_examples()
        )
        _, arrays, _ = tf.while_loop(
            lambda position, *_: tf.reduce_any(position < doc_ends),
            step,
            (doc_starts, arrays, tf.constant(0)),
        )
        examples = [array.concat() for array in arrays]
        dropped = tf.constant(0)
        if self.next_sentence_prediction and self.balanced_nsp:
            examples, dropped = self._drop_forced_negatives(
                examples, tf.random.experimental.stateless_fold_in(seed, -3)
            )
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

    @staticmethod
    def _drop_forced_negatives(examples, seed):
        """Where the group has more random-next pairs than true ones even with
        every eligible chunk made a true pair, drops that many forced ones (a
        single sentence's, at random), at most half the group's examples, and
        none in a group without a true pair (nothing to balance with)."""
        labels, forced = examples[3], examples[4]
        positives = tf.reduce_sum(1 - labels)
        limit = tf.minimum(tf.reduce_sum(forced), tf.size(labels) // 2)
        drop = tf.where(positives > 0, tf.clip_by_value(tf.reduce_sum(labels) - positives, 0, limit), 0)
        # The `drop` forced examples with the lowest draws; the others draw above every forced one.
        draws = tf.where(forced > 0, tf.random.stateless_uniform(tf.shape(labels), seed), 2.0)
        keep = tf.argsort(tf.argsort(draws)) >= drop
        return [tf.boolean_mask(part, keep) for part in examples], drop

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

    @staticmethod
    def _binomial(counts, seed):
        """Binomial(counts, 0.5) for each entry (how many cut tokens come off the front)."""
        counts = tf.cast(counts, tf.float32)
        return tf.cast(
            tf.random.stateless_binomial(tf.shape(counts), seed, counts, 0.5, output_dtype=tf.int32), tf.int32
        )
