"""A tf.data pipeline with tf.data's autotuning off: every pipeline that
keras_bert3 hands to `fit` or iterates itself (task batches, pretraining
batches, `prepare-data`'s shards).

With autotuning on, deleting an iterator can wait for tf.data's optimization
thread to wake from its sleep, which doubles over a run up to 60 s: a `fit`
then returns long after its last step, or a later call stalls where the
garbage collector deletes the iterator, in
`UnboundedThreadPool::LogicalThreadWrapper`. Untuned, an `AUTOTUNE` map or
interleave runs one call per CPU (or per cycle element) and an `AUTOTUNE`
prefetch still sizes its buffer.
"""

import tensorflow as tf


def without_autotune(dataset: tf.data.Dataset) -> tf.data.Dataset:
    """`dataset` with `options.autotune.enabled = False`."""
    options = tf.data.Options()
    options.autotune.enabled = False
    return dataset.with_options(options)
