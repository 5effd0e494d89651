"""The one seeding scheme of the pretraining pipeline: every random draw is a stateless op seeded by the pass's
seed `[seed, pass]` folded with the draw's place (a range's position, then its window and group; a batch's
index). A dataset counts its own passes, so no draw depends on TensorFlow's global seed or the process (the
order of `tf.data`'s seeded shuffles does: docs/pretraining_data.md): a range gives the same pairs whichever
worker, process or Beam element makes it, and shards (pass 0) hold a stream's first pass."""

import itertools

import tensorflow as tf

# Places of the draws that are not a range's (whose places are its position, >= 0).
MASKS = -1
DOCUMENT_GROUPS = -2


def pass_seeds(seed: int) -> tf.data.Dataset:
    """A dataset of one int64 `(2,)` element, `[seed, k]` on its k-th iteration."""
    passes = itertools.count()

    @tf.autograph.experimental.do_not_convert  # Traced as written: no Python control flow on tensors.
    def this_pass(_):
        index = tf.ensure_shape(tf.py_function(lambda: next(passes), [], tf.int64), [])
        return tf.stack([tf.constant(seed, tf.int64), index])

    return tf.data.Dataset.from_tensors(0).map(this_pass)


def range_seeds(count: int, seed: int, *, pass_index: int | None = None, reproducible: bool = True) -> tf.data.Dataset:
    """`(position, seed)` for the `count` ranges, in order, each pass: the pass's seed folded with `position`.
    `pass_index`: a fixed pass (shards: 0). Not `reproducible`: `clock_seeds`."""
    if not reproducible:
        return tf.data.Dataset.zip(tf.data.Dataset.range(count), clock_seeds(seed))
    bases = (
        pass_seeds(seed)
        if pass_index is None
        else tf.data.Dataset.from_tensors(tf.constant([seed, pass_index], tf.int64))
    )
    positions = lambda base: tf.data.Dataset.range(count).map(lambda p: (p, fold_seed(base, p)))  # noqa: E731
    return bases.flat_map(positions)


def counted_seeds(seed: int, place: int, *, reproducible: bool = True) -> tf.data.Dataset:
    """Endless seeds each pass, the k-th the pass's seed folded with `place` and k. Not `reproducible`:
    `clock_seeds`."""
    if not reproducible:
        return clock_seeds(seed)
    draws = lambda base: tf.data.Dataset.counter().map(lambda k: fold_seed(base, place, k))  # noqa: E731
    return pass_seeds(seed).flat_map(draws)


def clock_seeds(seed: int) -> tf.data.Dataset:
    """Endless seeds mixed with the clock, for `tf.data` service workers, whose copies of one graph would draw
    alike. TensorFlow ops only, and no single-element source (the service would hand it to one worker)."""

    def with_clock(pair):
        clock = tf.bitcast(tf.timestamp(), tf.int64)  # Microseconds and below differ per call and machine.
        return tf.stack([pair[0], tf.bitwise.bitwise_xor(pair[1], clock)])

    return tf.data.Dataset.random(seed=seed).batch(2).map(with_clock)


def fold_seed(seed, *places) -> tf.Tensor:
    """`seed` (int64 `(2,)`) folded with each of `places` in turn: the seed of a draw at that place."""
    seed = tf.cast(seed, tf.int64)
    for place in places:
        seed = tf.random.experimental.stateless_fold_in(seed, tf.cast(place, tf.int64))
    return seed
