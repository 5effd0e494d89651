"""`dropout_add_layer_norm`'s fused Pallas kernels (JAX) give the unfused ops' values and gradients within 1e-5 in
float32, with dropout on (the same masks: `ops.dropout`'s hashes) and off, on rows whose width is not a power of two;
an encoder block's training step through them gives the block's own outputs and weight gradients. Here the kernels run
in Pallas' interpreter and are lowered to Triton for a CUDA GPU (the compile to GPU code and the speed need a GPU:
`bench/gpu_pretraining_step.py`'s `fusedln` rows)."""

import contextlib

import keras
import numpy as np
import pytest

from keras_bert3.layers.bert_encoder_block import BertEncoderBlock
from keras_bert3.ops import dropout_add_layer_norm as fused_module
from keras_bert3.ops.dropout_add_layer_norm import dropout_add_layer_norm
from keras_bert3.ops.dropout_add_layer_norm import dropout_add_layer_norm_reference
from tests.ops.gradients import value_and_gradients

# Not `cpu_numerics` (tests/cpu_kind_test.py's rerun on an AVX2-only CPU): the kernels are a GPU's; the interpreter
# here computes with XLA's element-wise code, which the other JAX ops' tests run there.
pytestmark = pytest.mark.skipif(keras.backend.backend() != "jax", reason="Pallas kernels are JAX's")


@contextlib.contextmanager
def kernels(interpret: bool):
    """The fused kernels turned on (in Pallas' interpreter, or for a GPU), then off again."""
    fused_module.enable_fused_dropout_add_layer_norm(interpret=interpret)
    try:
        yield
    finally:
        fused_module.disable_fused_dropout_add_layer_norm()


def inputs(shape, seed=0):
    rng = np.random.default_rng(seed)
    width = shape[-1]
    return [
        rng.normal(size=shape).astype("float32"),
        rng.normal(size=shape).astype("float32"),
        (rng.uniform(size=width) + 0.5).astype("float32"),
        rng.normal(size=width).astype("float32"),
    ]


@pytest.mark.parametrize("shape, rate", [((3, 10, 48), 0.1), ((2, 8, 128), 0.0)])
def test_the_kernels_give_the_unfused_values_and_gradients(shape, rate):
    import jax

    def unfused(x, sublayer, gamma, beta):
        seed = keras.random.SeedGenerator(7)
        return dropout_add_layer_norm_reference(x, sublayer, gamma, beta, 1e-12, rate=rate, seed=seed)

    @jax.jit  # The interpreter's kernels compiled once, not run op by op.
    def fused(x, sublayer, gamma, beta):
        seed = keras.random.SeedGenerator(7)
        return dropout_add_layer_norm(x, sublayer, gamma, beta, 1e-12, rate=rate, seed=seed)

    expected, expected_gradients = value_and_gradients(unfused, *inputs(shape))
    with kernels(interpret=True):
        value, gradients = value_and_gradients(fused, *inputs(shape))
    np.testing.assert_allclose(value, expected, atol=1e-5)
    for name, gradient, expected_gradient in zip(("x", "sublayer", "gamma", "beta"), gradients, expected_gradients):
        np.testing.assert_allclose(gradient, expected_gradient, atol=1e-5, err_msg=name)
    if rate:  # The sublayer's dropped elements get no gradient: the same share as the rate asked for.
        dropped = np.mean(gradients[1] == 0)
        assert abs(dropped - rate) < 0.05, dropped


def test_an_encoder_block_trains_through_them_as_through_its_own_layers():
    import jax
    import jax.numpy as jnp

    x = np.random.default_rng(1).normal(size=(2, 12, 48)).astype("float32")
    padding_mask = np.array([[1] * 12, [1] * 7 + [0] * 5])

    def step(fused: bool):
        with kernels(interpret=True) if fused else contextlib.nullcontext():
            keras.utils.set_random_seed(3)
            block = BertEncoderBlock(num_heads=4, intermediate_dim=96, dropout=0.1)
            block.build(x.shape)
            trainable = [v.value for v in block.trainable_variables]
            others = [v.value for v in block.non_trainable_variables]
            weights = jnp.cos(jnp.arange(x.size, dtype="float32")).reshape(x.shape)

            def loss(trainable, x):
                y, _ = block.stateless_call(trainable, others, x, padding_mask, training=True)
                return jnp.sum(y * weights)

            return jax.jit(jax.value_and_grad(loss, argnums=(0, 1)))(trainable, jnp.asarray(x))

    (expected, (expected_weights, expected_x)), (value, (weights, x_gradient)) = step(False), step(True)
    np.testing.assert_allclose(value, expected, rtol=1e-6)
    np.testing.assert_allclose(x_gradient, expected_x, atol=1e-5)
    for gradient, expected_gradient in zip(weights, expected_weights):
        np.testing.assert_allclose(gradient, expected_gradient, atol=1e-5)


@pytest.mark.parametrize("width", [768, 1024])
def test_they_lower_to_triton_for_a_cuda_gpu(width):
    """BERT-base's and BERT-large's rows in bfloat16, forward and backward: the Pallas kernels lower to Triton (what
    fails on shapes Triton refuses), exported for CUDA from this CPU."""
    import jax
    import jax.numpy as jnp
    from jax import export

    class Seed:  # The mask's seed words as an input of the exported step (`ops.dropout` takes `seed.next()`).
        def __init__(self, words):
            self.words = words

        def next(self):
            return self.words

    def loss(x, sublayer, gamma, beta, words):
        y = dropout_add_layer_norm(x, sublayer, gamma, beta, 1e-12, rate=0.1, seed=Seed(words))
        return jnp.sum(y.astype("float32"))

    rows = jax.ShapeDtypeStruct((64, 128, width), jnp.bfloat16)
    row = jax.ShapeDtypeStruct((width,), jnp.float32)
    step = jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2, 3)))
    with kernels(interpret=False):
        exported = export.export(
            step, platforms=["cuda"], disabled_checks=[export.DisabledSafetyCheck.custom_call("__gpu$xla.gpu.triton")]
        )(rows, rows, row, row, jax.ShapeDtypeStruct((2,), jnp.uint32))
    assert exported.mlir_module().count("@__gpu$xla.gpu.triton") == 2  # The forward kernel and the backward one.
