"""Dropout with masks that are cheaper to draw than Keras' and exact to 2**-16.

BERT drops 10% of the attention probabilities and of three hidden states in
every block, so a training step draws several random numbers per element of
its largest tensors. Keras' dropout (`dropout_reference`) draws one uniform
float per element in the input's dtype:
- on JAX, from `jax.random`, which XLA's CPU backend generates in a loop that
  is not vectorised (at length 512 the attention probabilities' mask cost
  more than the step's matrix products);
- on TensorFlow, from Philox, a 32-bit word per element; in bfloat16 that
  word becomes a uniform with 7 bits, so rate 0.1 drops 13/128 = 10.16% of
  the elements (kept ones are still scaled by 1/0.9).

Here, a mask needs independent-looking bits and the exact keep rate, no more:
- JAX: two rounds of an avalanche hash (Wellons' "lowbias32") of each
  element's position and the step's seed, a few vectorised integer operations
  fused into the multiply; compared at 32 bits.
- TensorFlow: Philox words cut into two 16-bit halves, one per element (half
  the generator's work), compared at 16 bits.

`tests/ops/dropout_test.py` checks keep rates, scaling, independence across
calls and positions, and gradients against `dropout_reference`;
`bench/bench_pretraining.py` measures the step.
"""

import functools

import keras
from keras import ops

# Elements are numbered by a uint32 counter on JAX: a larger tensor would repeat a mask.
MAX_ELEMENTS = 2**32


def dropout(inputs, rate: float, *, seed: keras.random.SeedGenerator):
    """`inputs` with each element zeroed with probability `rate` (0 < rate < 1)
    and the others divided by `1 - rate`: the same shape and dtype, the
    statistics and scaling of `dropout_reference`, with other masks.

    `seed` is advanced once per call, as `keras.layers.Dropout` advances its
    own; the same seed state gives the same mask.

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
    """Keras' dropout, `keras.random.dropout`: what `keras.layers.Dropout`
    computes when training.

    Example:
    >>> dropout_reference(np.ones((2, 8), "float32"), 0.1, seed=keras.random.SeedGenerator(0)).shape
    (2, 8)
    """
    return keras.random.dropout(inputs, rate, seed=seed)


@functools.cache
def _jax_hashed_dropout():
    """The JAX function, built on first use (JAX is imported only on that backend)."""
    import jax.numpy as jnp
    from jax import lax

    def lowbias32(v):
        """A bijection of uint32 with strong avalanche (C. Wellons, "Hash
        Prospector", 2018): each input bit flips each output bit with probability ~1/2."""
        v = v ^ (v >> 16)
        v = v * jnp.uint32(0x7FEB352D)
        v = v ^ (v >> 15)
        v = v * jnp.uint32(0x846CA68B)
        return v ^ (v >> 16)

    def hashed_dropout(inputs, seed, rate):
        seed = seed.astype(jnp.uint32)
        key = lowbias32(lowbias32(seed[0] ^ jnp.uint32(0x9E3779B9)) ^ seed[1])
        position = lax.iota(jnp.uint32, inputs.size).reshape(inputs.shape)
        bits = lowbias32(lowbias32(position ^ key) + key)
        keep = bits >= jnp.uint32(round(rate * MAX_ELEMENTS))
        return lax.select(keep, inputs / (1.0 - rate), jnp.zeros_like(inputs))

    return hashed_dropout


@functools.cache
def _tensorflow_half_word_dropout():
    """The TensorFlow function, built on first use."""
    import tensorflow as tf

    def half_word_dropout(inputs, seed, rate):
        # Seeds as Keras' TensorFlow backend passes them (int32, which XLA needs).
        seed = tf.cast(tf.math.floormod(tf.cast(seed, "int64"), tf.int32.max - 1), "int32")
        size = tf.size(inputs)
        words = tf.random.stateless_uniform([(size + 1) // 2], seed, minval=None, maxval=None, dtype=tf.uint32)
        halves = tf.reshape(tf.bitcast(words, tf.uint16), [-1])[:size]  # Two per word.
        keep = tf.reshape(halves, tf.shape(inputs)) >= tf.constant(round(rate * 2**16), tf.uint16)
        # Kept values scaled as `tf.nn.dropout` scales them.
        return tf.where(keep, inputs * tf.cast(1.0 / (1.0 - rate), inputs.dtype), tf.zeros((), inputs.dtype))

    return half_word_dropout
