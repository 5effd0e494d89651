"""Sentence pairs for next sentence prediction, streamed, as in google-research/bert
`create_pretraining_data.py` (`create_instances_from_document`)."""

from collections.abc import Iterable
from collections.abc import Iterator

import numpy as np

from keras_bert3.data.data_counters import DataCounters


class SentencePairer:
    """Turns a stream of tokenized documents into BERT pretraining pairs.

    Follows `create_instances_from_document` of google-research/bert: per document,
    the target length is `sequence_length - 3`, or with probability `short_seq_prob`
    a uniform length in `[2, sequence_length - 3]` (one draw per document, as there);
    sentences accumulate into a chunk until the target is reached; A takes a random
    number of the chunk's sentences; with probability 0.5, and always when A took the
    whole chunk, B is a random span of another document and A's unused sentences are
    put back, else B is the rest of the chunk (the true continuation); the pair is
    truncated longer side first, each token from the front or the back with equal
    probability. Laid out as `[CLS] A [SEP] B [SEP]`, segment ids 0 then 1, padded.

    Label convention, as the original: `next_sentence_label` is 0 when B is the
    true continuation of A, 1 when B is a random span of another document.

    With `next_sentence_prediction=False` (RoBERTa-style MLM over single documents),
    the chunk's sentences form one segment `[CLS] A [SEP]` of up to
    `sequence_length - 2` tokens, and the label is 0.

    How streaming differs from the original: the original draws the other document
    uniformly from all documents in memory (retrying 10 times to avoid the same
    document, then taking it anyway). Here it is drawn uniformly from a reservoir
    sample (Algorithm R) of up to `reservoir_size` documents seen so far, never the
    same document; pairing starts once the reservoir is full (or the stream ends),
    so memory is bounded by `reservoir_size` documents.

    Args:
        sequence_length: int. Length of a pair, at least 5.
        cls_token_id, sep_token_id, pad_token_id: int. The special ids.
        short_seq_prob: float. Probability of a shortened target length.
        next_sentence_prediction: bool. Pairs with NSP labels, or single segments.
        reservoir_size: int. Documents held to draw random next segments from.
        chunk_size: int. Examples per yielded array.
        counters: optional `DataCounters`, updated as examples are made.

    Examples:

    >>> pairer = SentencePairer(sequence_length=16, cls_token_id=2, sep_token_id=3, pad_token_id=0)
    >>> documents = [[np.array([5, 6, 7]), np.array([8, 9])], [np.array([10, 11]), np.array([12])]]
    >>> token_ids, segment_ids, lengths, labels = next(pairer.examples([documents], seed=0))
    >>> token_ids.shape, labels.dtype
    ((4, 16), dtype('int32'))
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
        reservoir_size: int = 1000,
        chunk_size: int = 256,
        counters: DataCounters | None = None,
    ):
        if sequence_length < 5:
            raise ValueError(f"sequence_length must be at least 5 ([CLS] a [SEP] b [SEP]), got {sequence_length}.")
        if reservoir_size < 2:
            raise ValueError(f"reservoir_size must be at least 2, got {reservoir_size}.")
        self.sequence_length = int(sequence_length)
        self.cls_token_id = int(cls_token_id)
        self.sep_token_id = int(sep_token_id)
        self.pad_token_id = int(pad_token_id)
        self.short_seq_prob = float(short_seq_prob)
        self.next_sentence_prediction = bool(next_sentence_prediction)
        self.reservoir_size = int(reservoir_size)
        self.chunk_size = int(chunk_size)
        self.counters = counters if counters is not None else DataCounters()

    def examples(
        self, document_batches: Iterable[list[list[np.ndarray]]], *, seed: int | tuple = 0
    ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """Pairs a stream of documents; one call is one pass, deterministic for `seed`.

        Args:
            document_batches: iterable of lists of documents; a document is a list of
                non-empty int arrays (its sentences' token ids).
            seed: int or tuple of ints, for `np.random.default_rng`.

        Yields:
            `(token_ids, segment_ids, lengths, next_sentence_label)`: int32 arrays
            `(k, sequence_length)`, `(k, sequence_length)`, `(k,)`, `(k,)`, k <= chunk_size.

        Raises:
            ValueError: if the stream has no document, or (with NSP) only one.
        """
        rng = np.random.default_rng(seed)
        self._rng = rng
        self._reservoir, self._seen = [], 0
        self._slots = {}  # id(document) -> its index in the reservoir.
        self._new_chunk()
        pending = []
        for batch in document_batches:
            for document in batch:
                self._add_to_reservoir(document)
                pending.append(document)
                if self._seen >= self.reservoir_size:
                    yield from self._pair(pending)
                    pending = []
        if self._seen == 0:
            raise ValueError("The corpus has no document with text: every file or document is empty.")
        if self.next_sentence_prediction and self._seen == 1:
            raise ValueError(
                "The corpus has a single document: next sentence prediction needs a second document "
                "to draw random next segments from. Add documents, or pass next_sentence_prediction=False."
            )
        yield from self._pair(pending)
        if self._filled:
            yield self._take_chunk()

    def _add_to_reservoir(self, document: list[np.ndarray]) -> None:
        """Algorithm R: the reservoir stays a uniform sample of all documents seen."""
        if len(self._reservoir) < self.reservoir_size:
            self._slots[id(document)] = len(self._reservoir)
            self._reservoir.append(document)
        else:
            j = int(self._rng.integers(0, self._seen + 1))
            if j < self.reservoir_size:
                del self._slots[id(self._reservoir[j])]
                self._slots[id(document)] = j
                self._reservoir[j] = document
        self._seen += 1

    def _pair(self, documents: list[list[np.ndarray]]):
        for document in documents:
            yield from self._document_examples(document)

    def _document_examples(self, document: list[np.ndarray]):
        rng, counters = self._rng, self.counters
        counters.documents += 1
        counters.single_sentence_documents += len(document) == 1
        nsp = self.next_sentence_prediction
        max_tokens = self.sequence_length - (3 if nsp else 2)
        target = max_tokens
        if rng.random() < self.short_seq_prob:
            target = int(rng.integers(2, max_tokens + 1))
            counters.shortened_documents += 1
        chunk, length, i = [], 0, 0
        while i < len(document):
            chunk.append(document[i])
            length += len(document[i])
            if i == len(document) - 1 or length >= target:
                if not nsp:
                    yield from self._emit(np.concatenate(chunk), None, 0, max_tokens)
                else:
                    a_end = int(rng.integers(1, len(chunk))) if len(chunk) >= 2 else 1
                    tokens_a = np.concatenate(chunk[:a_end])
                    if len(chunk) == 1 or rng.random() < 0.5:
                        label = 1
                        counters.forced_random_next += len(chunk) == 1
                        tokens_b = self._random_span(document, target - len(tokens_a))
                        i -= len(chunk) - a_end  # Put the unused sentences back.
                    else:
                        label = 0
                        tokens_b = np.concatenate(chunk[a_end:])
                    yield from self._emit(tokens_a, tokens_b, label, max_tokens)
                chunk, length = [], 0
            i += 1

    def _random_span(self, document: list[np.ndarray], target_length: int) -> np.ndarray:
        """Sentences of another document from a random one on, until `target_length` tokens."""
        rng, reservoir = self._rng, self._reservoir
        own = self._slots.get(id(document))
        if own is None:
            other = reservoir[rng.integers(0, len(reservoir))]
        else:
            k = int(rng.integers(0, len(reservoir) - 1))
            other = reservoir[k + (k >= own)]
        span, length = [], 0
        for sentence in other[rng.integers(0, len(other)) :]:
            span.append(sentence)
            length += len(sentence)
            if length >= target_length:
                break
        return np.concatenate(span)

    def _emit(self, tokens_a, tokens_b, label: int, max_tokens: int):
        tokens_a, tokens_b = self._truncate(tokens_a, tokens_b, max_tokens)
        k = self._filled
        if k == 0:
            self._token_ids.fill(self.pad_token_id)
            self._segment_ids.fill(0)
        ids = self._token_ids[k]
        ids[0] = self.cls_token_id
        end = 1 + len(tokens_a)
        ids[1:end] = tokens_a
        ids[end] = self.sep_token_id
        end += 1
        if tokens_b is not None:
            ids[end : end + len(tokens_b)] = tokens_b
            self._segment_ids[k, end : end + len(tokens_b) + 1] = 1
            end += len(tokens_b)
            ids[end] = self.sep_token_id
            end += 1
        self._lengths[k] = end
        self._labels[k] = label
        self.counters.examples += 1
        self.counters.random_next += label
        self._filled += 1
        if self._filled == self.chunk_size:
            yield self._take_chunk()

    def _truncate(self, tokens_a, tokens_b, max_tokens: int):
        """The original's `truncate_seq_pair` in closed form: the longer side loses a
        token (B on ties) until the pair fits; each from the front or the back at random."""
        length_a, length_b = len(tokens_a), 0 if tokens_b is None else len(tokens_b)
        excess = length_a + length_b - max_tokens
        if excess <= 0:
            return tokens_a, tokens_b
        if tokens_b is None:
            cut_a, cut_b = excess, 0
        elif length_a > length_b:
            first = min(length_a - length_b, excess)
            rest = excess - first
            cut_a, cut_b = first + rest // 2, (rest + 1) // 2
        else:
            first = min(length_b - length_a + 1, excess)
            rest = excess - first
            cut_a, cut_b = (rest + 1) // 2, first + rest // 2
        front_a = int(self._rng.binomial(cut_a, 0.5))
        tokens_a = tokens_a[front_a : length_a - (cut_a - front_a)]
        if tokens_b is not None:
            front_b = int(self._rng.binomial(cut_b, 0.5))
            tokens_b = tokens_b[front_b : length_b - (cut_b - front_b)]
        return tokens_a, tokens_b

    def _new_chunk(self) -> None:
        shape = (self.chunk_size, self.sequence_length)
        self._token_ids = np.full(shape, self.pad_token_id, np.int32)
        self._segment_ids = np.zeros(shape, np.int32)
        self._lengths = np.zeros(self.chunk_size, np.int32)
        self._labels = np.zeros(self.chunk_size, np.int32)
        self._filled = 0

    def _take_chunk(self):
        k = self._filled
        chunk = (
            self._token_ids[:k].copy(),
            self._segment_ids[:k].copy(),
            self._lengths[:k].copy(),
            self._labels[:k].copy(),
        )
        self._filled = 0
        return chunk
