"""Ragged token rows: inputs kept unpadded, so a text is tokenized once and padded per batch."""

import tensorflow as tf

from keras_bert3.preprocessing.batch_by_length import batch_by_length

PAD_VALUES = {"labels": -100}  # Other columns pad with 0.


def as_rows(inputs: dict, names) -> dict:
    """Model inputs `(batch, length)` -> a ragged row per example for each of `names`, plus int32 `length`."""
    lengths = tf.reduce_sum(tf.cast(inputs["padding_mask"], tf.int32), axis=-1)
    return dict({name: tf.RaggedTensor.from_tensor(inputs[name], lengths=lengths) for name in names}, length=lengths)


def concat_rows(chunks: list) -> dict:
    """The `as_rows` dicts of consecutive chunks as one."""
    return {name: tf.concat([chunk[name] for chunk in chunks], axis=0) for name in chunks[0]}


def padded_batches(
    dataset, names, *, batch_size: int, multiple: int, sequence_length: int, bucket: bool, shuffle: bool, seed=None
):
    """Unbatched `as_rows` examples -> batches with `names` padded as `trim_to_longest`
    pads, plus a `padding_mask`; with `bucket`, grouped by length (`batch_by_length`)."""
    if bucket:
        dataset = batch_by_length(dataset, batch_size, shuffle=shuffle, seed=seed)
    else:
        dataset = dataset.ragged_batch(batch_size)

    def pad(columns):
        lengths = columns["length"]
        longest = tf.reduce_max(tf.concat([lengths, [1]], 0))
        width = tf.minimum((longest + multiple - 1) // multiple * multiple, sequence_length)
        shape = tf.cast(tf.stack([tf.size(lengths), width]), tf.int64)
        padded = {name: columns[name].to_tensor(PAD_VALUES.get(name, 0), shape=shape) for name in names}
        padded["padding_mask"] = tf.sequence_mask(lengths, width, dtype=tf.int32)
        rest = {name: value for name, value in columns.items() if name not in names and name != "length"}
        return dict(padded, **rest)

    return dataset.map(pad, num_parallel_calls=tf.data.AUTOTUNE)


def inputs_and_targets(columns: dict, target: str):
    """A padded batch -> `inputs`, `(inputs, targets)` or `(inputs, targets, sample_weight)` for `fit`."""
    inputs = {name: columns[name] for name in ("token_ids", "segment_ids", "padding_mask")}
    if target not in columns:
        return inputs
    if "sample_weight" in columns:
        return inputs, columns[target], columns["sample_weight"]
    return inputs, columns[target]
