"""Several pretraining pairs in one row: for long rows (512 tokens) of short
pairs, the compute that padding would take goes to real tokens.

`pack_pairs` takes a batch of masked pairs as `pretraining_dataset` yields
them and lays them end to end, in order, into rows of `row_length`: a pair
goes into the current row if it fits whole, else it starts the next row, so
no pair is ever split. `padding_mask` then numbers each token's pair within
its row (1, 2, ...; 0 for padding), from which `BertPretrainer(packed=True)`
keeps attention and positions within each pair; each pair's masked positions
and [CLS] position are moved by its offset in the row.
"""

import tensorflow as tf


def pack_pairs(x: dict, y: dict, sample_weight: dict, row_length: int):
    """Packs a batch of pairs `(x, y, sample_weight)` into rows.

    Args:
        x: `token_ids`, `segment_ids`, `padding_mask` (1 for real tokens)
            int `(pairs, length)`; `mask_positions` int `(pairs, predictions)`.
        y: `mlm` int `(pairs, predictions)`; with NSP, `nsp` int `(pairs,)`
            (or `(pairs, 1)`).
        sample_weight: `mlm` float `(pairs, predictions)`.
        row_length: int. Tokens per packed row; every pair must fit in one.

    Returns:
        `(x, y, sample_weight)` of the packed rows, `(rows, row_length)` for
        the token inputs, `padding_mask` numbering the pairs; each row's
        `mask_positions`, `mlm` targets and weights hold its pairs' in order
        (padded with weight 0 to the longest row's); with NSP, `nsp_positions`
        (each pair's first token), `nsp` labels `(rows, pairs)` and
        `sample_weight["nsp"]` (0 for a row's unused pair slots).

    Raises:
        InvalidArgumentError: a pair is longer than `row_length`.

    Example:
    >>> x, y, w = next(iter(pretraining_dataset(files, tokenizer, sequence_length=128, batch_size=64)))  # doctest: +SKIP
    >>> packed_x, packed_y, packed_w = pack_pairs(x, y, w, row_length=512)  # doctest: +SKIP
    """
    lengths = tf.reduce_sum(tf.cast(tf.not_equal(x["padding_mask"], 0), tf.int32), axis=1)
    check = tf.debugging.assert_less_equal(
        lengths, row_length,
        message=f"a pair is longer than the packed row of {row_length} tokens: pack into longer rows, "
                "or make pairs of at most that length (sequence_length)",
    )  # fmt: skip
    with tf.control_dependencies([check]):
        rows, offsets = _greedy_rows(lengths, row_length)
    num_rows = tf.reduce_max(tf.concat([rows, [-1]], axis=0)) + 1
    first_pair_of_row = tf.math.unsorted_segment_min(tf.range(tf.size(rows)), rows, num_rows)
    pair_in_row = tf.range(tf.size(rows)) - tf.gather(first_pair_of_row, rows)  # 0, 1, ... within each row.

    # Tokens: each pair's real tokens to (its row, its offset + their index).
    token_rows = tf.repeat(rows, lengths)
    token_columns = tf.repeat(offsets, lengths) + tf.ragged.range(lengths).flat_values
    where = tf.stack([token_rows, token_columns], axis=1)
    shape = tf.stack([num_rows, row_length])

    def scatter(values):
        real = tf.RaggedTensor.from_tensor(values, lengths=lengths).flat_values
        return tf.scatter_nd(where, tf.cast(real, tf.int32), shape)

    packed_x = {
        "token_ids": scatter(x["token_ids"]),
        "segment_ids": scatter(x["segment_ids"]),
        "padding_mask": scatter(tf.repeat((pair_in_row + 1)[:, None], tf.shape(x["token_ids"])[1], axis=1)),
    }

    def by_row(values):  # (pairs, ...) -> ragged (rows, pairs of the row, ...)
        return tf.RaggedTensor.from_value_rowids(values, rows, nrows=num_rows)

    def row_predictions(values, default):  # (pairs, predictions) -> (rows, pairs of the row x predictions), padded.
        return by_row(values).merge_dims(1, 2).to_tensor(default_value=default)

    moved = tf.cast(x["mask_positions"], tf.int32) + offsets[:, None]
    packed_x["mask_positions"] = row_predictions(moved, 0)
    packed_y = {"mlm": row_predictions(tf.cast(y["mlm"], tf.int32), 0)}
    packed_w = {"mlm": row_predictions(tf.cast(sample_weight["mlm"], tf.float32), 0.0)}
    if "nsp" in y:
        packed_x["nsp_positions"] = by_row(offsets).to_tensor(default_value=0)
        packed_y["nsp"] = by_row(tf.reshape(tf.cast(y["nsp"], tf.int32), [-1])).to_tensor(default_value=0)
        packed_w["nsp"] = by_row(tf.ones_like(offsets, tf.float32)).to_tensor(default_value=0.0)
    return packed_x, packed_y, packed_w


def _greedy_rows(lengths, row_length: int):
    """Each pair's row and offset in it: pairs in order, a new row whenever
    the next pair would not fit whole."""

    def place(state, length):
        row, used = state
        new_row = used + length > row_length
        row = tf.where(new_row, row + 1, row)
        offset = tf.where(new_row, 0, used)
        return row, offset + length

    starts = tf.scan(place, lengths, initializer=(tf.constant(-1, tf.int32), tf.constant(row_length, tf.int32)))
    rows, ends = starts
    return rows, ends - lengths
