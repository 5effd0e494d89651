"""`token_rows` and `from_token_rows` change only the layout: a block's
per-token layers (dense, residual, LayerNorm) give the values of
`token_rows_reference`'s 3-D tensors, in float32 and bfloat16, training or
not, and the round trip gives back the input unchanged."""

import keras
import numpy as np
import pytest

from keras_bert3.ops.token_rows import from_token_rows
from keras_bert3.ops.token_rows import token_rows
from keras_bert3.ops.token_rows import token_rows_reference
from tests.ops.gradients import as_float32

pytestmark = pytest.mark.cpu_numerics  # Kernels against references: tests/cpu_kind_test.py.


def per_token_layers(dtype):
    """A dense layer, a residual and a LayerNorm, as in an encoder block."""
    keras.utils.set_random_seed(0)
    dense = keras.layers.Dense(16, activation="gelu", dtype=dtype)
    layer_norm = keras.layers.LayerNormalization(dtype=dtype)
    dense.build((None, 16))
    layer_norm.build((None, 16))
    return lambda x: layer_norm(x + dense(x))


@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("dtype, atol", [("float32", 1e-6), ("bfloat16", 2**-6)])
def test_per_token_layers_give_the_reference_values(training, dtype, atol):
    x = keras.ops.cast(np.random.default_rng(0).normal(size=(3, 7, 16)), dtype)
    layers = per_token_layers(dtype)
    shape = keras.ops.shape(x)
    ours = from_token_rows(layers(token_rows(x, training=training)), shape)
    theirs = from_token_rows(layers(token_rows_reference(x, training=training)), shape)
    assert tuple(ours.shape) == tuple(theirs.shape) == (3, 7, 16)
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(as_float32(ours), as_float32(theirs), rtol=0, atol=atol)


@pytest.mark.parametrize("training", [False, True])
def test_rows_are_the_tokens_in_order_and_come_back_unchanged(training):
    x = np.random.default_rng(1).normal(size=(3, 7, 16)).astype("float32")
    rows = as_float32(token_rows(x, training=training))
    assert rows.shape in ((21, 16), (3, 7, 16))
    np.testing.assert_array_equal(rows.reshape(3, 7, 16), x)
    np.testing.assert_array_equal(as_float32(from_token_rows(token_rows(x, training=training), x.shape)), x)


def test_inference_runs_on_rows():
    # Rows at inference on every backend; training keeps them on JAX only.
    x = np.ones((2, 5, 8), "float32")
    assert tuple(token_rows(x, training=False).shape) == (10, 8)
    expected = (10, 8) if keras.backend.backend() == "jax" else (2, 5, 8)
    assert tuple(token_rows(x, training=True).shape) == expected
