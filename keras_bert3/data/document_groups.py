"""Stage 2 of the pretraining pipeline, group: each range's documents shuffled a window at a time and dealt into
groups of about `pairing_group` (random next segments come from a group's others), each with its own seed."""

import tensorflow as tf

from keras_bert3.data.corpus_reader import CorpusRange
from keras_bert3.data.corpus_reader import range_reader
from keras_bert3.data.data_counters import DataCounters
from keras_bert3.data.pipeline_seeds import fold_seed
from keras_bert3.data.pipeline_seeds import range_seeds


def corpus_groups(
    ranges: list[CorpusRange],
    pairing_group: int,
    *,
    seed: int,
    select=None,
    in_order: bool = False,
    counters: DataCounters | None = None,
    reproducible: bool = True,
) -> tf.data.Dataset:
    """The groups of documents of `ranges`: `(position, end, group, group_seed)`, `group` a tf.string
    `tf.RaggedTensor` `(documents, sentences)`. Ranges are read four at a time, in a new order each pass; with
    `in_order` (shards), one at a time in order, each followed by an empty group with `end` True, seeded as pass 0.
    Seeds come from `range_seeds`, so a range's groups are the same in any order and any share.

    Args:
        select: optional function of the `(position, seed)` dataset of all the ranges to the ones to read.
        counters: see `range_reader`.
        reproducible: bool. False: the seeds take in the clock (`clock_seeds`).
    """
    read = range_reader(ranges, counters=counters)
    positions = range_seeds(len(ranges), seed, pass_index=0 if in_order else None, reproducible=reproducible)
    positions = select(positions) if select is not None else positions
    no_documents = tf.RaggedTensor.from_row_splits(tf.zeros([0], tf.string), tf.zeros([1], tf.int64))

    @tf.autograph.experimental.do_not_convert  # Traced as written, as `paired_examples`.
    def windows_of(position, range_seed):
        windows = read(position).enumerate().map(lambda index, documents: (position, index, range_seed, documents))
        if in_order:
            windows = windows.concatenate(
                tf.data.Dataset.from_tensors((position, tf.constant(-1, tf.int64), range_seed, no_documents))
            )
        return windows

    if in_order:
        windows = positions.flat_map(windows_of)
    else:
        positions = positions.shuffle(len(ranges), seed=seed, reshuffle_each_iteration=True)
        windows = positions.interleave(
            windows_of, cycle_length=min(4, len(ranges)), num_parallel_calls=tf.data.AUTOTUNE, deterministic=True
        )

    @tf.autograph.experimental.do_not_convert  # Traced as written, as `paired_examples`.
    def deal(position, index, range_seed, documents):
        window_seed = fold_seed(range_seed, index)
        groups = deal_into_groups(documents, pairing_group, window_seed)
        count = groups.nrows()
        group_seeds = tf.map_fn(lambda g: fold_seed(window_seed, g + 1), tf.range(count), fn_output_signature=tf.int64)
        return tf.fill([count], position), tf.fill([count], index < 0), groups, group_seeds

    # Deals in parallel: a window's shuffle would otherwise hold one core.
    return windows.map(deal, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True).unbatch()


def deal_into_groups(documents: tf.RaggedTensor, group_size: int, seed) -> tf.RaggedTensor:
    """Shuffles documents into groups of about `group_size` (evenly smaller where they do not divide):
    `(groups, documents, sentences)`."""
    count = documents.nrows(out_type=tf.int32)
    order = tf.argsort(tf.random.stateless_uniform([count], seed))
    documents = tf.gather(documents, order)
    groups = tf.maximum((count + group_size - 1) // group_size, 1)
    sizes = count // groups + tf.cast(tf.range(groups) < count % groups, tf.int32)
    return tf.RaggedTensor.from_row_lengths(documents, tf.cast(sizes, tf.int64))
