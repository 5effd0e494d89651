"""tf.data's autotuning off, for every pipeline keras_bert3 hands to `fit` or iterates itself. With it on,
deleting an iterator can wait for tf.data's optimization thread to wake from a sleep that doubles over a run:
`fit` returns long after its last step, or a later call stalls where the garbage collector deletes the iterator
(`UnboundedThreadPool::LogicalThreadWrapper`). Untuned, an `AUTOTUNE` map or interleave runs one call per CPU
(or cycle element) and an `AUTOTUNE` prefetch still sizes its buffer.
"""

import tensorflow as tf


def without_autotune(dataset: tf.data.Dataset) -> tf.data.Dataset:
    """`dataset` with `options.autotune.enabled = False`."""
    options = tf.data.Options()
    options.autotune.enabled = False
    return dataset.with_options(options)
