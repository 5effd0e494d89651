"""A tf.data pipeline with tf.data's autotuning off, for fine-tuning batches.

With autotuning on, deleting an iterator waits for tf.data's optimization
thread to wake from its sleep, which grows to tens of seconds over a run: a
one-epoch `fit` then returns long after its last step, the iterator's
destructor waiting in `UnboundedThreadPool::LogicalThreadWrapper`. Fine-tuning pipelines are
short and fixed (one parallel map, a prefetch of 2 batches), so they lose
nothing by running untuned: `AUTOTUNE` map parallelism then means one call
per CPU.
"""

import tensorflow as tf


def without_autotune(dataset: tf.data.Dataset) -> tf.data.Dataset:
    """`dataset` with `options.autotune.enabled = False`.

    Example:
    >>> batches = without_autotune(texts.batch(32).map(pack, num_parallel_calls=tf.data.AUTOTUNE).prefetch(2))
    """
    options = tf.data.Options()
    options.autotune.enabled = False
    return dataset.with_options(options)
