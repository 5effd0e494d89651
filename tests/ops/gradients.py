"""Values and gradients of a function on the running backend, for the tests
that a fast function's gradient is its reference's.

    value, grads = value_and_gradients(split_heads, qkv)
"""

import keras
import numpy as np


def as_float32(tensor) -> np.ndarray:
    return np.asarray(keras.ops.convert_to_numpy(keras.ops.cast(tensor, "float32")))


def value_and_gradients(function, *args, seed: int = 9):
    """`function(*args)` (a tensor or a tuple of them) and the gradients,
    with respect to every arg, of its outputs' sum weighted by fixed random
    numbers (each output cast to float32 first); numpy float32 out."""
    rng = np.random.default_rng(seed)
    weights = [rng.normal(size=tuple(o.shape)).astype("float32") for o in keras.tree.flatten(function(*args))]

    def loss(*a):
        outputs = keras.tree.flatten(function(*a))
        return sum(keras.ops.sum(keras.ops.cast(o, "float32") * w) for o, w in zip(outputs, weights))

    if keras.backend.backend() == "jax":
        import jax

        value = function(*args)
        grads = jax.grad(loss, argnums=tuple(range(len(args))))(*args)
    else:
        import tensorflow as tf

        args = [tf.convert_to_tensor(a) for a in args]
        with tf.GradientTape() as tape:
            tape.watch(args)
            value = function(*args)
            total = loss(*args)
        grads = tape.gradient(total, args)
    return keras.tree.map_structure(as_float32, value), [as_float32(g) for g in grads]
