"""Length-sorted batches for fine-tuning: little padding, every batch full but the last."""

import tensorflow as tf


def batch_by_length(dataset, batch_size: int, *, shuffle: bool, seed=None, chunk_batches: int = 64):
    """Batches of examples of similar `length` (Hugging Face's `group_by_length`).

    Each chunk of `chunk_batches * batch_size` unbatched examples (dicts with an int
    `length`) is sorted by length and cut into batches; variable-length columns are ragged."""

    def sort_by_length(columns):
        order = tf.argsort(columns["length"], stable=True)
        return {name: tf.gather(column, order) for name, column in columns.items()}

    examples = int(dataset.cardinality())
    dataset = dataset.ragged_batch(batch_size * chunk_batches).map(sort_by_length).unbatch().ragged_batch(batch_size)
    if shuffle:
        dataset = dataset.shuffle(chunk_batches, seed=seed, reshuffle_each_iteration=True)
    if examples >= 0:  # tf.data cannot see through `unbatch` that every batch is full but the last.
        dataset = dataset.apply(tf.data.experimental.assert_cardinality(-(-examples // batch_size)))
    return dataset
