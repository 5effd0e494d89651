"""Dropout with masks cheaper to draw than Keras' (`jax.random` is not vectorised on XLA's CPU backend;
TensorFlow's bfloat16 uniform has 7 bits) and exact to 2**-16: on JAX a hash (Wellons' "lowbias32") of
each element's position and the seed; on TensorFlow, Philox words cut into two 16-bit halves.
"""

import functools

import keras
from keras import ops

# JAX numbers elements with a uint32: a larger tensor would repeat a mask.
MAX_ELEMENTS = 2**32


def dropout(inputs, rate: float, *, seed: keras.random.SeedGenerator):
    """`inputs` with each element zeroed with probability `rate` (0 < rate < 1), the others divided by
    `1 - rate`: the statistics of `dropout_reference`, other masks. `seed` advances once per call.

    Example:
    >>> dropout(np.ones((2, 8), "float32"), 0.1, seed=keras.random.SeedGenerator(0)).shape
    (2, 8)
    """
    inputs = ops.convert_to_tensor(inputs)
    backend = keras.backend.backend()
    if backend == "jax" and inputs.size < MAX_ELEMENTS:
        return _jax_hashed_dropout()(inputs, seed.next(), rate)
    if backend == "tensorflow":
        return _tensorflow_half_word_dropout()(inputs, seed.next(), rate)
    return dropout_reference(inputs, rate, seed=seed)


def dropout_reference(inputs, rate: float, *, seed: keras.random.SeedGenerator):
    """Keras' dropout, `keras.random.dropout`.

    Example:
    >>> dropout_reference(np.ones((2, 8), "float32"), 0.1, seed=keras.random.SeedGenerator(0)).shape
    (2, 8)
    """
    return keras.random.dropout(inputs, rate, seed=seed)


def lowbias32(v):
    """A uint32 bijection with strong avalanche (C. Wellons, "Hash Prospector"), of a JAX uint32 array."""
    import jax.numpy as jnp

    v = v ^ (v >> 16)
    v = v * jnp.uint32(0x7FEB352D)
    v = v ^ (v >> 15)
    v = v * jnp.uint32(0x846CA68B)
    return v ^ (v >> 16)


def hashed_mask_key(seed):
    """The uint32 key of JAX's masks for a Keras seed (`SeedGenerator.next()`, two words)."""
    import jax.numpy as jnp

    seed = seed.astype(jnp.uint32)
    return lowbias32(lowbias32(seed[0] ^ jnp.uint32(0x9E3779B9)) ^ seed[1])


def hashed_keep(position, key, rate: float):
    """JAX's dropout mask: whether the elements at `position` (uint32, their row-major index in the tensor) are
    kept, for the mask `key` (`hashed_mask_key`); the same in a Pallas kernel as in XLA."""
    import jax.numpy as jnp

    bits = lowbias32(lowbias32(position ^ key) + key)
    return bits >= jnp.uint32(round(rate * MAX_ELEMENTS))


@functools.cache
def _jax_hashed_dropout():
    """The JAX function, built on first use."""
    import jax.numpy as jnp
    from jax import lax

    def hashed_dropout(inputs, seed, rate):
        position = lax.iota(jnp.uint32, inputs.size).reshape(inputs.shape)
        keep = hashed_keep(position, hashed_mask_key(seed), rate)
        return lax.select(keep, inputs / (1.0 - rate), jnp.zeros_like(inputs))

    return hashed_dropout


@functools.cache
def _tensorflow_half_word_dropout():
    """The TensorFlow function, built on first use."""
    import tensorflow as tf

    def half_word_dropout(inputs, seed, rate):
        # int32 seeds, as Keras' TensorFlow backend passes them (XLA needs them).
        seed = tf.cast(tf.math.floormod(tf.cast(seed, "int64"), tf.int32.max - 1), "int32")
        size = tf.size(inputs)
        words = tf.random.stateless_uniform([(size + 1) // 2], seed, minval=None, maxval=None, dtype=tf.uint32)
        halves = tf.reshape(tf.bitcast(words, tf.uint16), [-1])[:size]  # Two per word.
        keep = tf.reshape(halves, tf.shape(inputs)) >= tf.constant(round(rate * 2**16), tf.uint16)
        return tf.where(keep, inputs * tf.cast(1.0 / (1.0 - rate), inputs.dtype), tf.zeros((), inputs.dtype))

    return half_word_dropout
