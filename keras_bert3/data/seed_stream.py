"""The stream of stateless seeds that every random step of the pretraining
pipeline draws from (one per window, group or batch), new on every pass."""

import tensorflow as tf


def seed_stream(seed: int, *, reproducible: bool = True) -> tf.data.Dataset:
    """An endless `tf.data.Dataset` of int64 `(2,)` seeds for stateless random
    ops: the same sequence for the same `seed` on the k-th pass, another on
    each pass (`rerandomize_each_iteration`).

    With `reproducible=False` each seed also takes in the clock of the machine
    that runs the pipeline: `tf.data` service workers run copies of one graph,
    whose seeded streams would otherwise be equal on every worker and restart
    alike on every job (every pass).

    Example:
    >>> seeds = seed_stream(0)
    >>> next(iter(seeds)).shape
    TensorShape([2])
    """
    seeds = tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True).batch(2)
    if reproducible:
        return seeds

    def with_clock(pair):
        clock = tf.bitcast(tf.timestamp(), tf.int64)  # Microseconds and below differ per call and machine.
        return tf.stack([pair[0], tf.bitwise.bitwise_xor(pair[1], clock)])

    return seeds.map(with_clock)
