"""Several pretraining pairs in one row, so that in long rows (512 tokens) of short pairs the compute padding
would take goes to real tokens: pairs laid end to end in order, never split, `pair_ids` numbering each token's
pair (1, 2, ...; 0 for padding) so that `BertPretrainer(packed=True)` keeps attention and positions per pair."""

import math

import tensorflow as tf

# Pairs packed together: the greedy packing of a window leaves its last row part empty.
PACKING_WINDOW = 256


def default_max_pairs_per_row(row_length: int) -> int:
    """Pair slots of a packed row unless chosen: one per 64 tokens (8 at 512)."""
    return max(1, row_length // 64)


def max_predictions_per_row(row_length: int, max_pairs_per_row: int, masked_lm_prob: float) -> int:
    """Prediction slots every packed row fits in: a pair of n tokens has at most
    `max(1, round(n * masked_lm_prob))` (`MlmMasker`), so a row `masked_lm_prob * row_length` plus one per pair."""
    return math.ceil(masked_lm_prob * row_length) + max_pairs_per_row


def pair_batches(
    pairs: tf.data.Dataset, batch_size: int, drop_remainder: bool, packed_length: int | None
) -> tf.data.Dataset:
    """Pairs batched before masking: `batch_size` a batch, or `PACKING_WINDOW` where they are to be packed."""
    if packed_length is None:
        return pairs.batch(batch_size, drop_remainder=drop_remainder)
    return pairs.batch(PACKING_WINDOW)


def packed_rows(
    masked: tf.data.Dataset,
    row_length: int | None,
    batch_size: int,
    *,
    max_pairs_per_row: int | None = None,
    masked_lm_prob: float = 0.15,
    drop_remainder: bool = False,
) -> tf.data.Dataset:
    """Masked pair batches to batches of `batch_size` packed rows of one shape (`row_length` None: as they
    are): tokens `(row_length,)`, predictions `(max_predictions_per_row(...),)`, NSP `(max_pairs_per_row,)`,
    unused slots weighing 0. Each input batch is packed on its own (`pack_pairs`)."""
    if row_length is None:
        return masked
    max_pairs = max_pairs_per_row or default_max_pairs_per_row(row_length)
    max_predictions = max_predictions_per_row(row_length, max_pairs, masked_lm_prob)

    @tf.autograph.experimental.do_not_convert  # Traced as written, as `paired_examples`.
    def pack(x, y, sample_weight):
        return pack_pairs(
            x, y, sample_weight, row_length, max_pairs_per_row=max_pairs, max_predictions_per_row=max_predictions
        )

    rows = masked.map(pack, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True).unbatch()
    return rows.batch(batch_size, drop_remainder=drop_remainder).prefetch(tf.data.AUTOTUNE)


def pack_pairs(
    x: dict,
    y: dict,
    sample_weight: dict,
    row_length: int,
    *,
    max_pairs_per_row: int | None = None,
    max_predictions_per_row: int | None = None,
):
    """Packs a batch of pairs `(x, y, sample_weight)` into rows of `row_length`.

    Args:
        x: `token_ids`, `segment_ids`, `padding_mask` int `(pairs, length)`; `mask_positions` `(pairs, predictions)`.
        y: `mlm` int `(pairs, predictions)`; with NSP, `nsp` int `(pairs,)` or `(pairs, 1)`.
        sample_weight: `mlm` float `(pairs, predictions)`.
        max_pairs_per_row: most pairs in a row; None: no limit.
        max_predictions_per_row: width of the rows' predictions; None: the most of a row.

    Returns:
        `(x, y, sample_weight)` of the rows: token inputs `(rows, row_length)` with `pair_ids` (1, 2, ...; 0 for
        padding); `mask_positions`, `mlm` and its weights: each row's real predictions in order, then slots of
        weight 0; with NSP, `nsp_positions` (each pair's [CLS]), `nsp` and its weights `(rows, pairs)`.

    Raises:
        InvalidArgumentError: a pair is longer than `row_length`, or a row's predictions do not fit.
    """
    lengths = pair_lengths(x["padding_mask"], row_length)
    rows, offsets = greedy_rows(lengths, row_length, max_pairs_per_row)
    num_rows, pair_in_row = pairs_in_rows(rows)
    packed_x = packed_tokens(x, lengths, rows, offsets, num_rows, row_length, pair_in_row)
    kept = row_prediction_indices(sample_weight["mlm"], rows, num_rows, max_predictions_per_row)

    def predictions(values, default):
        return row_predictions(values, kept, default, max_predictions_per_row)

    moved = tf.cast(x["mask_positions"], tf.int32) + offsets[:, None]  # Positions in the row.
    packed_x["mask_positions"] = predictions(moved, 0)
    packed_y = {"mlm": predictions(tf.cast(y["mlm"], tf.int32), 0)}
    packed_w = {"mlm": predictions(tf.cast(sample_weight["mlm"], tf.float32), 0.0)}
    if "nsp" in y:
        packed_x["nsp_positions"], packed_y["nsp"], packed_w["nsp"] = packed_nsp(
            y["nsp"], rows, offsets, num_rows, max_pairs_per_row
        )
    return packed_x, packed_y, packed_w


def pair_lengths(padding_mask, row_length: int):
    """Each pair's real tokens, int32 `(pairs,)`, from `padding_mask` `(pairs, length)`; an
    `InvalidArgumentError` where one does not fit `row_length`."""
    lengths = tf.reduce_sum(tf.cast(tf.not_equal(padding_mask, 0), tf.int32), axis=1)
    check = tf.debugging.assert_less_equal(
        lengths,
        row_length,
        message=f"a pair is longer than the packed row of {row_length} tokens: pack into longer rows, "
        "or make pairs of at most that length (sequence_length)",
    )
    with tf.control_dependencies([check]):
        return tf.identity(lengths)


def greedy_rows(lengths, row_length: int, max_pairs_per_row: int | None = None):
    """Each pair's row and offset, int32 `(pairs,)`: a new row where the next pair would not fit (or be too many)."""
    most = tf.constant(max_pairs_per_row or 2**30, tf.int32)

    def place(state, length):
        row, used, pairs = state
        new_row = tf.logical_or(used + length > row_length, pairs >= most)
        row = tf.where(new_row, row + 1, row)
        offset = tf.where(new_row, 0, used)
        return row, offset + length, tf.where(new_row, 1, pairs + 1)

    initial = (tf.constant(-1, tf.int32), tf.constant(row_length, tf.int32), tf.constant(0, tf.int32))
    rows, ends, _ = tf.scan(place, lengths, initializer=initial)
    return rows, ends - lengths


def pairs_in_rows(rows):
    """The number of rows, and each pair's place in its row (0, 1, ...), from each pair's row `(pairs,)`."""
    num_rows = tf.reduce_max(tf.concat([rows, [-1]], axis=0)) + 1
    first_pair_of_row = tf.math.unsorted_segment_min(tf.range(tf.size(rows)), rows, num_rows)
    return num_rows, tf.range(tf.size(rows)) - tf.gather(first_pair_of_row, rows)


def packed_tokens(x: dict, lengths, rows, offsets, num_rows, row_length: int, pair_in_row) -> dict:
    """The rows' token inputs, int32 `(rows, row_length)`: each pair's real tokens moved to its row at its
    offset, `pair_ids` (1, 2, ...; 0 for padding) and `padding_mask`."""
    token_rows = tf.repeat(rows, lengths)
    token_columns = tf.repeat(offsets, lengths) + tf.ragged.range(lengths).flat_values
    where = tf.stack([token_rows, token_columns], axis=1)  # (real tokens, 2)
    shape = tf.stack([num_rows, row_length])

    def scatter(values):
        real = tf.RaggedTensor.from_tensor(values, lengths=lengths).flat_values
        return tf.scatter_nd(where, tf.cast(real, tf.int32), shape)

    pair_ids = scatter(tf.repeat((pair_in_row + 1)[:, None], tf.shape(x["token_ids"])[1], axis=1))
    return {
        "token_ids": scatter(x["token_ids"]),
        "segment_ids": scatter(x["segment_ids"]),
        "padding_mask": tf.cast(pair_ids > 0, tf.int32),
        "pair_ids": pair_ids,
    }


def by_row(values, rows, num_rows) -> tf.RaggedTensor:
    """Per-pair `values` `(pairs, ...)` grouped by row: ragged `(rows, pairs of the row, ...)`."""
    return tf.RaggedTensor.from_value_rowids(values, rows, nrows=num_rows)


def row_prediction_indices(weights, rows, num_rows, max_predictions_per_row: int | None) -> tf.RaggedTensor:
    """Each row's real predictions (weight > 0), in order, as indices into the flattened `weights`:
    ragged `(rows, predictions)`; checked to fit `max_predictions_per_row`, as `to_tensor` would cut them."""
    real = tf.cast(weights, tf.float32) > 0
    flat_index = tf.reshape(tf.range(tf.size(real)), tf.shape(real))
    kept = by_row(tf.ragged.boolean_mask(flat_index, real).with_row_splits_dtype(tf.int32), rows, num_rows)
    kept = kept.merge_dims(1, 2)
    if max_predictions_per_row is None:
        return kept
    check = tf.debugging.assert_less_equal(
        kept.row_lengths(),
        max_predictions_per_row,
        message=f"a packed row has more masked positions than its {max_predictions_per_row} prediction slots",
    )
    with tf.control_dependencies([check]):
        return tf.identity(kept)


def row_predictions(values, kept: tf.RaggedTensor, default, width: int | None):
    """`values` `(pairs, predictions)` picked by `kept` into rows `(rows, width)`, padded with `default`."""
    picked = tf.gather(tf.reshape(values, [-1]), kept)
    return picked.to_tensor(default_value=default, shape=[None, width])


def packed_nsp(nsp, rows, offsets, num_rows, max_pairs_per_row: int | None):
    """The rows' NSP parts, `(rows, max_pairs_per_row)` (None: the most of a row): each pair's [CLS]
    position and label, int32, and weights, float32, 0 for an unused slot."""
    slots = [None, max_pairs_per_row]
    positions = by_row(offsets, rows, num_rows).to_tensor(default_value=0, shape=slots)
    labels = by_row(tf.reshape(tf.cast(nsp, tf.int32), [-1]), rows, num_rows).to_tensor(default_value=0, shape=slots)
    weights = by_row(tf.ones_like(offsets, tf.float32), rows, num_rows).to_tensor(default_value=0.0, shape=slots)
    return positions, labels, weights
