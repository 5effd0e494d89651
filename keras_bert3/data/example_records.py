"""Pairs to serialized `tf.train.Example` records with TensorFlow ops (`tf.io.encode_proto`), a whole batch at
once inside `tf.data`: no Python per example, so writing shards runs on every core."""

import tensorflow as tf


def pair_records(token_ids, segment_ids, lengths, labels) -> tf.Tensor:
    """Batch of pairs to tf.string `(examples,)`: `tf.train.Example`s of `input_ids`, `segment_ids` (cut
    to length) and `next_sentence_labels`, byte for byte `SerializeToString(deterministic=True)`'s."""
    count = tf.shape(lengths)[0]
    entries = tf.stack(
        [
            _entry("input_ids", _int64_feature(token_ids, lengths)),
            _entry("next_sentence_labels", _int64_feature(labels[:, None], tf.ones_like(lengths))),
            _entry("segment_ids", _int64_feature(segment_ids, lengths)),
        ],
        axis=1,
    )
    features = tf.io.encode_proto(tf.fill([count, 1], 3), [entries], ["feature"], "tensorflow.Features")
    return tf.io.encode_proto(tf.ones([count, 1], tf.int32), [features[:, None]], ["features"], "tensorflow.Example")


def _int64_feature(values, sizes):
    values = tf.cast(values, tf.int64)
    int64_list = tf.io.encode_proto(tf.cast(sizes, tf.int32)[:, None], [values], ["value"], "tensorflow.Int64List")
    ones = tf.ones([tf.shape(int64_list)[0], 1], tf.int32)
    return tf.io.encode_proto(ones, [int64_list[:, None]], ["int64_list"], "tensorflow.Feature")


def _entry(key: str, feature):
    count = tf.shape(feature)[0]
    keys = tf.fill([count, 1], key)
    sizes = tf.ones([count, 2], tf.int32)
    return tf.io.encode_proto(sizes, [keys, feature[:, None]], ["key", "value"], "tensorflow.Features.FeatureEntry")
