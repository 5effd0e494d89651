"""Ragged token rows: tokenize once, pad per batch. Each example's model
inputs are kept as a variable-length row (its real tokens, no padding) and
padded when its batch is formed. `fit` then tokenizes a text once however many epochs it runs, and a
batch is padded only to its own longest example."""

import tensorflow as tf

from keras_bert3.preprocessing.batch_by_length import batch_by_length

PAD_VALUES = {"labels": -100}  # Token labels the loss skips; other columns pad with 0.


def as_rows(inputs: dict, names) -> dict:
    """Model inputs (int `(batch, length)` tensors) -> a ragged row per example for each
    of `names` (its first `length` entries, `length` read off `padding_mask`),
    plus the int32 `length` itself.
    """
    lengths = tf.reduce_sum(tf.cast(inputs["padding_mask"], tf.int32), axis=-1)
    return dict({name: tf.RaggedTensor.from_tensor(inputs[name], lengths=lengths) for name in names}, length=lengths)


def concat_rows(chunks: list) -> dict:
    """The `as_rows` dicts of consecutive chunks as one."""
    return {name: tf.concat([chunk[name] for chunk in chunks], axis=0) for name in chunks[0]}


def padded_batches(
    dataset, names, *, batch_size: int, multiple: int, sequence_length: int, bucket: bool, shuffle: bool, seed=None
):
    """Unbatched examples (`as_rows` columns and any per-example columns, e.g.
    `label`) -> batches with `names` padded to the batch's longest `length`
    rounded up to `multiple` (at most `sequence_length`), as the preprocessors'
    `trim_to_longest` pads, and a `padding_mask`. With `bucket`, batches group
    similar lengths (`batch_by_length`); otherwise they keep the order."""
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
    """A padded batch -> `inputs`, `(inputs, targets)` or `(inputs, targets,
    sample_weight)`, as Keras' `fit` takes them; `target` names the targets' column."""
    inputs = {name: columns[name] for name in ("token_ids", "segment_ids", "padding_mask")}
    if target not in columns:
        return inputs
    if "sample_weight" in columns:
        return inputs, columns[target], columns["sample_weight"]
    return inputs, columns[target]
