"""Dropout whose mask, on JAX, comes from an integer hash of each element's
position and the step's seed instead of `jax.random`.

XLA's CPU backend generates `jax.random` bits (threefry, and also rbg and
Philox) in a loop that is not vectorised: about 10 ns per element, so the
attention probabilities' mask of a BERT step at length 512 cost more than its
matrix products. Two rounds of an avalanche hash (Wellons' "lowbias32") are a
few vectorised integer operations per element, fused into the multiply.
A dropout mask needs independent-looking bits, not a cryptographic generator:
the keep rate is exact to 2**-32, masks differ with every step's seed, and
`tests/layers/hashed_dropout_test.py` checks their statistics against
`keras.layers.Dropout`'s. TensorFlow's own dropout kernel is fast: there, and
for `noise_shape`, it is Keras' dropout. `bench/bench_pretraining.py` measures it.
"""

import functools

import keras

# Elements are numbered by a uint32 counter: a larger tensor would repeat a mask.
MAX_ELEMENTS = 2**32


@keras.saving.register_keras_serializable(package="keras_bert3")
class HashedDropout(keras.layers.Dropout):
    """`keras.layers.Dropout` (same arguments, same seed generator) whose
    mask on JAX is hashed from the element's position and the seed.

    Example:
    >>> dropout = HashedDropout(0.1, seed=0)
    >>> dropout(np.ones((2, 8), "float32"), training=True).shape
    (2, 8)
    """

    def call(self, inputs, training=False):
        if (not training or self.rate <= 0 or self.rate >= 1 or self.noise_shape is not None
                or keras.backend.backend() != "jax" or inputs.size >= MAX_ELEMENTS):  # fmt: skip
            return super().call(inputs, training=training)
        return _jax_hashed_dropout()(inputs, self.seed_generator.next(), self.rate)


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
