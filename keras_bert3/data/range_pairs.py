"""The NSP pairs of byte ranges of a corpus (a shard's worth each), made the
way `pretraining_dataset` makes them: documents shuffled in windows, dealt
into groups, each group tokenized and paired by `DocumentGroupPairer`.

Every random draw is seeded by the range's seed and the position in it (window,
group), so a range's pairs are the same whichever process makes them, and in
whatever order; one `tf.data` pipeline serves all the ranges of a process."""

import numpy as np
import tensorflow as tf

from keras_bert3.data.corpus_ranges import CorpusRange
from keras_bert3.data.corpus_ranges import range_documents
from keras_bert3.data.document_dataset import deal_into_groups
from keras_bert3.data.document_group_pairer import DocumentGroupPairer
from keras_bert3.data.paired_examples import pair_group


def range_pairs(
    ranges: list[CorpusRange],
    seeds: list[int],
    tokenizer,
    *,
    sequence_length: int = 128,
    short_seq_prob: float = 0.1,
    next_sentence_prediction: bool = True,
    balanced_nsp: bool = True,
    pairing_group: int = 256,
    window: int = 4096,
    positions=None,
    counters=None,
) -> tf.data.Dataset:
    """Batches of pairs `(position, end, token_ids, segment_ids, lengths,
    labels)` from the documents that start in each range, range by range:
    `position` is the range's index in `ranges`; after its last batch comes one
    with `end` True and no example (so that a range without pairs shows too).

    `positions`: a function that returns an iterable of the positions to make,
    in order (default: all), e.g. one that claims work shared with other processes.

    Example:
    >>> pairs = range_pairs(corpus_ranges(paths, 64)[:4], [0, 1, 2, 3], tokenizer)  # doctest: +SKIP
    """
    positions = positions or (lambda: range(len(ranges)))

    def windows():
        """(position, window index, sentences, document lengths); window -1 ends a range."""
        for position in positions():
            documents, count = [], 0
            for document in range_documents(ranges[position]):
                documents.append(document)
                if len(documents) == window:
                    yield (position, count) + _flat(documents)
                    documents, count = [], count + 1
            if documents:
                yield (position, count) + _flat(documents)
            yield position, -1, np.zeros([0], object), np.zeros([0], np.int64)

    spec = (tf.TensorSpec([], tf.int64), tf.TensorSpec([], tf.int64),
            tf.TensorSpec([None], tf.string), tf.TensorSpec([None], tf.int64))  # fmt: skip
    range_seeds = tf.constant(seeds, tf.int64)

    @tf.autograph.experimental.do_not_convert  # Traced as written, as `paired_examples`.
    def deal(position, window_index, sentences, lengths):
        """Groups of the window, each with its seed and the range's position;
        an end of range becomes one empty group marked `end`."""
        seed = tf.stack([range_seeds[position], -1 - window_index])
        groups = deal_into_groups(tf.RaggedTensor.from_row_lengths(sentences, lengths), pairing_group, seed)
        count = groups.nrows()
        group_seeds = tf.stack([tf.fill([count], range_seeds[position]), window_index * 2**20 + tf.range(count)], axis=1)
        end = tf.fill([count], window_index < 0)
        return tf.fill([count], position), end, groups, group_seeds

    pairer = DocumentGroupPairer.for_tokenizer(
        tokenizer,
        sequence_length=sequence_length,
        short_seq_prob=short_seq_prob,
        next_sentence_prediction=next_sentence_prediction,
        balanced_nsp=balanced_nsp,
    )

    @tf.autograph.experimental.do_not_convert
    def pair(position, end, group, group_seed):
        return (position, end) + pair_group(group, group_seed, tokenizer, pairer, counters)

    groups = tf.data.Dataset.from_generator(windows, output_signature=spec)
    groups = groups.map(deal, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True).unbatch()
    return groups.map(pair, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)


def _flat(documents: list[list[bytes]]) -> tuple[np.ndarray, np.ndarray]:
    sentences = np.array([sentence for document in documents for sentence in document], dtype=object)
    return sentences, np.array([len(document) for document in documents], np.int64)
