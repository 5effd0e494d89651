"""Length-sorted batches for fine-tuning: little padding, every batch full but the last."""

import tensorflow as tf


def batch_by_length(dataset, batch_size: int, *, shuffle: bool, seed=None, chunk_batches: int = 64):
    """Batches of examples of similar `length` (Hugging Face's `group_by_length`).

    Each chunk of `chunk_batches * batch_size` examples (in the order they
    come, shuffled or not) is sorted by length and cut into batches; with
    `shuffle`, the batches are then shuffled. Every batch is full except the
    last one of the epoch, so a compiled step sees one shape per padded
    length plus one, not a partial batch for every length bucket.

    Args:
        dataset: unbatched dicts of columns with an int `length` (other
            columns may vary in length: they come out as ragged tensors).
        batch_size: int.
        shuffle: bool. Shuffle the batches (the examples are shuffled before).
        seed: int or None.
        chunk_batches: int. Batches per sorted chunk.
    """

    def sort_by_length(columns):
        order = tf.argsort(columns["length"], stable=True)
        return {name: tf.gather(column, order) for name, column in columns.items()}

    examples = int(dataset.cardinality())
    # `ragged_batch`: columns of variable length (token rows) batch as ragged tensors.
    dataset = dataset.ragged_batch(batch_size * chunk_batches).map(sort_by_length).unbatch().ragged_batch(batch_size)
    if shuffle:  # Otherwise batches come shortest first within each chunk.
        dataset = dataset.shuffle(chunk_batches, seed=seed, reshuffle_each_iteration=True)
    if examples >= 0:  # tf.data cannot see through `unbatch` that every batch is full but the last.
        dataset = dataset.apply(tf.data.experimental.assert_cardinality(-(-examples // batch_size)))
    return dataset
