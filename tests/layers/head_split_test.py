"""`split_heads`: the values, and on JAX the custom gradient, equal those of
the plain transpose-and-unstack it replaces."""

import keras
import numpy as np
import pytest

from keras_bert3.layers.head_split import split_heads


def plain_split(qkv):
    return tuple(keras.ops.unstack(keras.ops.transpose(qkv, (2, 0, 3, 1, 4)), 3, axis=0))


def test_values_are_the_plain_split():
    qkv = np.random.default_rng(0).normal(size=(2, 5, 3, 4, 8)).astype("float32")
    for ours, plain in zip(split_heads(qkv), plain_split(qkv)):
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(ours), keras.ops.convert_to_numpy(plain))


@pytest.mark.skipif(keras.backend.backend() != "jax", reason="the custom gradient is JAX's")
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_the_gradient_is_autodiff_of_the_plain_split(dtype):
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(1)
    qkv = jnp.asarray(rng.normal(size=(2, 5, 3, 4, 8)), dtype)
    weights = [jnp.asarray(rng.normal(size=(2, 4, 5, 8)), dtype) for _ in range(3)]

    def loss(split):
        return lambda x: sum((part * w).astype("float32").sum() for part, w in zip(split(x), weights))

    ours, plain = jax.grad(loss(split_heads))(qkv), jax.grad(loss(plain_split))(qkv)
    assert ours.dtype == plain.dtype
    np.testing.assert_array_equal(np.asarray(ours, "float32"), np.asarray(plain, "float32"))
