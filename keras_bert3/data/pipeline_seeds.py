"""The one seeding scheme of the pretraining pipeline. Every random draw is a
stateless op; its seed is a range's seed folded with the draw's place in it
(window, group), or the pass's seed for a batch. A range's seed depends on its
position alone: for a stream, the pass's; for shards, the seed's. So a range
gives the same pairs whichever worker, process or Beam element makes it, in
whatever order, and each streaming pass draws anew."""

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


def range_seeds(count: int, seed: int, *, every_pass: bool = True, reproducible: bool = True) -> tf.data.Dataset:
    """`(position, seed)` for the `count` ranges of a corpus, in position
    order: range `position` takes the `position`-th seed of the pass's
    `seed_stream` (new each pass, and dependent on TensorFlow's global seed,
    as every seeded `tf.data` op), whichever share of the ranges a reader keeps
    after this; or, if not `every_pass`, `seed` folded with `position`, the same
    in every process (shards).

    Example:
    >>> [int(p) for p, _ in range_seeds(3, 0)]
    [0, 1, 2]
    """
    positions = tf.data.Dataset.range(count)
    if not every_pass:
        return positions.map(lambda position: (position, fold_seed(tf.constant([seed, 0], tf.int64), position)))
    return tf.data.Dataset.zip(positions, seed_stream(seed, reproducible=reproducible))


def fold_seed(seed, *places) -> tf.Tensor:
    """`seed` (int64 `(2,)`) folded with each of `places` in turn: the seed of
    a draw at that place (e.g. window 3, group 5 of a range).

    Example:
    >>> fold_seed(tf.constant([1, 2], tf.int64), 3, 5).shape
    TensorShape([2])
    """
    seed = tf.cast(seed, tf.int64)
    for place in places:
        seed = tf.random.experimental.stateless_fold_in(seed, tf.cast(place, tf.int64))
    return seed
