"""Graph functions traced once a process for an object (a tokenizer, its pairing settings) and called by every graph
built after: a `tf.data` pipeline, a preprocessing map or a serving function built again calls the same graph
instead of tracing the same Python again."""

import weakref

import tensorflow as tf

# owner -> {key: tf.function}. Weak: an owner's functions go with it.
_FUNCTIONS = weakref.WeakKeyDictionary()


def traced_once(owner, key, python_function, **options) -> tf.function:
    """`python_function(owner, *args)` as a `tf.function` of `*args`, one per `owner` and `key` (hashable; it must
    name everything besides the owner that the traced graph depends on) for the life of the process.

    The function holds `owner` weakly, so a deleted owner and its traced graphs are freed. `options` go to
    `tf.function` (e.g. `input_signature`); autograph is off: the Python is traced as written.

    Example:
    >>> row_lengths = lambda tokenizer, texts: tokenizer.tokenize(texts).row_lengths()  # doctest: +SKIP
    >>> lengths = traced_once(tokenizer, "lengths", row_lengths)  # doctest: +SKIP
    >>> lengths(tf.constant(["a few words", "more words than that"]))  # doctest: +SKIP
    """
    functions = _FUNCTIONS.setdefault(owner, {})
    if key not in functions:
        held = weakref.ref(owner)
        functions[key] = tf.function(lambda *args: python_function(held(), *args), autograph=False, **options)
    return functions[key]
