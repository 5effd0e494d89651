"""Batched, vectorised tokenization of a document dataset into Python lists of id arrays."""

from collections.abc import Iterator

import numpy as np
import tensorflow as tf

from keras_bert3.data.data_counters import DataCounters


def tokenized_documents(
    documents: tf.data.Dataset,
    tokenizer,
    *,
    batch_size: int = 64,
    counters: DataCounters | None = None,
) -> Iterator[list[list[np.ndarray]]]:
    """Tokenizes documents a batch at a time (one tokenizer call per batch, in
    `tf.data` worker threads) and yields each batch as Python lists.

    Invalid UTF-8 is replaced by U+FFFD (and counted); sentences that tokenize to
    nothing and documents left without sentences are dropped (and counted), as the
    original `create_pretraining_data.py` drops them.

    Args:
        documents: `tf.data.Dataset` of tf.string tensors `(sentences,)`.
        tokenizer: a `BertTokenizer`.
        batch_size: int. Documents per tokenizer call.
        counters: optional `DataCounters`, updated as batches are read.

    Yields:
        list (documents) of lists (sentences) of int32 arrays `(tokens,)`.

    Examples:

    >>> batches = tokenized_documents(document_dataset("corpus.txt"), tokenizer)  # doctest: +SKIP
    >>> next(batches)[0][0]  # doctest: +SKIP
    array([2023, 2003, ...], dtype=int32)
    """
    counters = counters if counters is not None else DataCounters()

    def tokenize(batch: tf.RaggedTensor):  # (documents, None) strings
        sentences = batch.flat_values
        valid = tf.strings.unicode_transcode(sentences, "UTF-8", "UTF-8", errors="replace")
        invalid = tf.reduce_sum(tf.cast(tf.not_equal(valid, sentences), tf.int32))
        ids = tokenizer.tokenize(valid)  # (sentences, None)
        return ids.flat_values, ids.row_splits, batch.row_splits, invalid

    batches = documents.ragged_batch(batch_size).map(
        tokenize, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True
    )
    for flat_ids, sentence_splits, document_splits, invalid in batches.prefetch(2).as_numpy_iterator():
        counters.invalid_utf8_sentences += int(invalid)
        sentences = np.split(flat_ids, sentence_splits[1:-1]) if len(sentence_splits) > 1 else []
        batch = []
        for start, end in zip(document_splits[:-1], document_splits[1:]):
            document = [s for s in sentences[start:end] if len(s)]
            counters.empty_sentences += int(end - start) - len(document)
            if document:
                counters.sentences += len(document)
                batch.append(document)
            else:
                counters.empty_documents += 1
        yield batch
