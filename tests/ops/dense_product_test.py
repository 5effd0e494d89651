"""`dense_product` against `dense_product_reference`: in float32 the same
values and gradients; in bfloat16 the values and all three gradients of
`x @ kernel + bias` computed in float32 and rounded once, so within bfloat16
rounding of the reference's. `dense_product_blocks` gives the blocks of the
one product, values and gradients."""

import keras
import numpy as np
import pytest

from keras_bert3.ops.dense_product import dense_product
from keras_bert3.ops.dense_product import dense_product_blocks
from keras_bert3.ops.dense_product import dense_product_reference
from tests.ops.gradients import as_float32
from tests.ops.gradients import value_and_gradients

BFLOAT16_STEP = 2.0**-8  # bfloat16 keeps 8 significant bits.

pytestmark = pytest.mark.cpu_numerics  # Kernels against references: tests/cpu_kind_test.py.


def operands(seed=0, transpose_kernel=False):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(3, 5, 16)).astype("float32")
    kernel = rng.normal(size=(24, 16) if transpose_kernel else (16, 24)).astype("float32") / 4
    bias = rng.normal(size=(24,)).astype("float32")
    return x, kernel, bias


def product_of(function, transpose_kernel):
    return lambda x, k, b: function(x, k, b, transpose_kernel=transpose_kernel)


@pytest.mark.parametrize("transpose_kernel", [False, True])
def test_float32_values_and_gradients_are_the_reference_ones(transpose_kernel):
    args = operands(transpose_kernel=transpose_kernel)
    value, grads = value_and_gradients(product_of(dense_product, transpose_kernel), *args)
    expected_value, expected_grads = value_and_gradients(product_of(dense_product_reference, transpose_kernel), *args)
    assert value.shape == (3, 5, 24)
    for ours, theirs in zip([value] + grads, [expected_value] + expected_grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6 * np.abs(theirs).max())


@pytest.mark.parametrize("transpose_kernel", [False, True])
def test_bfloat16_values_and_gradients_are_the_float32_ones_rounded(transpose_kernel):
    x, kernel, bias = operands(transpose_kernel=transpose_kernel)
    as_bfloat16 = [keras.ops.cast(a, "bfloat16") for a in (x, kernel, bias)]
    # The same bfloat16 operands, every product in float32.
    exact = [as_float32(a) for a in as_bfloat16]
    product = product_of(dense_product, transpose_kernel)
    value, grads = value_and_gradients(product, *as_bfloat16)
    expected_value, expected_grads = value_and_gradients(product, *exact)
    for ours, theirs in zip([value] + grads, [expected_value] + expected_grads):
        scale = np.abs(theirs).max()
        np.testing.assert_allclose(ours, theirs, atol=2 * BFLOAT16_STEP * scale, rtol=0)
    assert keras.ops.convert_to_tensor(product(*as_bfloat16)).dtype == "bfloat16"


@pytest.mark.parametrize("transpose_kernel", [False, True])
def test_bfloat16_values_and_gradients_are_the_reference_ones_within_rounding(transpose_kernel):
    as_bfloat16 = [keras.ops.cast(a, "bfloat16") for a in operands(seed=1, transpose_kernel=transpose_kernel)]
    value, grads = value_and_gradients(product_of(dense_product, transpose_kernel), *as_bfloat16)
    expected_value, expected_grads = value_and_gradients(
        product_of(dense_product_reference, transpose_kernel), *as_bfloat16
    )
    for ours, theirs in zip([value] + grads, [expected_value] + expected_grads):
        # Each side rounds to bfloat16 once or twice: a few steps of the largest value.
        np.testing.assert_allclose(ours, theirs, atol=4 * BFLOAT16_STEP * np.abs(theirs).max(), rtol=0)


def test_the_transposed_kernel_gives_the_same_product():
    x, kernel, bias = operands()
    straight = dense_product(x, kernel, bias)
    transposed = dense_product(x, np.ascontiguousarray(kernel.T), bias, transpose_kernel=True)
    np.testing.assert_allclose(as_float32(transposed), as_float32(straight), atol=1e-5)


def test_without_a_bias_it_is_the_reference_matmul():
    x, kernel, _ = operands()
    np.testing.assert_allclose(
        as_float32(dense_product(x, kernel)), as_float32(dense_product_reference(x, kernel)), rtol=1e-6, atol=1e-6
    )
    np.testing.assert_allclose(as_float32(dense_product(x, kernel)), x @ kernel, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_blocks_are_the_one_products_blocks_in_values_and_gradients(dtype):
    """Three products of the kernel's column blocks (an encoder block's query,
    key and value) against the one product split: within 1e-5 in float32, in
    values and in the gradients of x, kernel and bias; in bfloat16, within
    its rounding (x's gradient adds three rounded products)."""
    args = [keras.ops.cast(a, dtype) for a in operands(seed=2)]

    def split_product(x, kernel, bias):
        return tuple(keras.ops.split(dense_product(x, kernel, bias), 3, axis=-1))

    value, grads = value_and_gradients(lambda *a: tuple(dense_product_blocks(*a, 3)), *args)
    expected_value, expected_grads = value_and_gradients(split_product, *args)
    assert [v.shape for v in value] == [(3, 5, 8)] * 3
    for ours, theirs in zip(list(value) + grads, list(expected_value) + expected_grads):
        scale = np.abs(theirs).max()
        assert scale > 0.1
        tolerance = 1e-5 if dtype == "float32" else 3 * BFLOAT16_STEP * scale
        np.testing.assert_allclose(ours, theirs, atol=tolerance, rtol=0)
