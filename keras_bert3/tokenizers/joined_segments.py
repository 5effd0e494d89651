"""`[CLS] a [SEP] (b [SEP])` rows from one or two ragged segments, padded: the join of `BertSegmentJoiner` and of the
pretraining examples (`keras_bert3.data.document_group_pairer`)."""

import tensorflow as tf


def joined_segments(segments, kept, *, cls_token_id: int, sep_token_id: int, pad_token_id: int, sequence_length: int):
    """Joins the first `kept[i]` (int `(batch,)`) tokens of each row of each ragged int32 `(batch, None)` segment
    of `segments` (one or two) as `[CLS] a [SEP] (b [SEP])`, padded to `sequence_length`, which must hold them.

    Returns int32 `token_ids` and `segment_ids` `(batch, sequence_length)` and each row's length `(batch,)`.

    Each output position reads [CLS], a kept token, [SEP] or padding: one gather from the segments' tokens and those
    three, at indices chosen on dense `(batch, sequence_length)` tensors (no ragged concatenation).

    Example:
    >>> token_ids, segment_ids, lengths = joined_segments(
    ...     [tf.ragged.constant([[10, 11, 12]]), tf.ragged.constant([[20, 21]])], [tf.constant([2], tf.int64)] * 2,
    ...     cls_token_id=2, sep_token_id=3, pad_token_id=0, sequence_length=8)
    >>> token_ids.numpy(), segment_ids.numpy(), lengths.numpy()
    (array([[ 2, 10, 11,  3, 20, 21,  3,  0]], dtype=int32), array([[0, 0, 0, 0, 1, 1, 1, 0]], dtype=int32), \
array([7], dtype=int32))
    """
    specials = tf.constant([cls_token_id, sep_token_id, pad_token_id], tf.int32)
    sources = tf.concat([segment.values for segment in segments] + [specials], axis=0)
    cls_index = tf.cast(tf.size(sources) - 3, tf.int64)
    sep_index, pad_index = cls_index + 1, cls_index + 2
    position = tf.range(sequence_length, dtype=tf.int64)[None, :]
    index = tf.where(position == 0, cls_index, pad_index)
    segment_ids = tf.zeros_like(index)
    kept = [tf.cast(count, tf.int64) for count in kept]
    start, offset = tf.ones_like(kept[0])[:, None], tf.constant(0, tf.int64)  # Where a segment's tokens start.
    for segment_index, (segment, count) in enumerate(zip(segments, kept)):
        end = start + count[:, None]  # Its [SEP].
        inside = (position >= start) & (position < end)
        index = tf.where(inside, offset + tf.cast(segment.row_starts(), tf.int64)[:, None] + position - start, index)
        index = tf.where(position == end, sep_index, index)
        segment_ids = tf.where((position >= start) & (position <= end), tf.cast(segment_index, tf.int64), segment_ids)
        start, offset = end + 1, offset + tf.size(segment.values, out_type=tf.int64)
    return tf.gather(sources, index), tf.cast(segment_ids, tf.int32), tf.cast(start[:, 0], tf.int32)
