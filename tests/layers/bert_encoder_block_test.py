"""`BertEncoderBlock`: one post-LayerNorm Transformer block, equal to Hugging
Face's `BertLayer` on the same weights, in each of its code paths."""

import keras
import numpy as np
import pytest

from keras_bert3.layers.bert_encoder_block import BertEncoderBlock
from tests.layers.conftest import additive_mask
from tests.layers.conftest import padded_batch
from tests.layers.conftest import torch_tensor
from tests.reference import import_reference


def block_inputs(hf_and_ours, seed=0):
    """The embeddings of a padded batch (the block's real input) and its mask."""
    _, backbone, _ = hf_and_ours
    batch = padded_batch(seed=seed)
    return keras.ops.convert_to_numpy(backbone.embeddings(batch["token_ids"], batch["segment_ids"])), batch[
        "padding_mask"
    ]


@pytest.mark.parametrize("layer", [0, 1])
@pytest.mark.parametrize("training", [False, True])  # Inference flattens the tokens (and, on TF, training does not).
def test_block_equals_hugging_face_bert_layer(hf_and_ours, layer, training):
    torch = import_reference("torch")
    model, backbone, _ = hf_and_ours
    x, padding_mask = block_inputs(hf_and_ours, seed=layer)
    ours = backbone.encoder_blocks[layer](x, padding_mask, training=training)  # Dropout 0: training changes no value.
    with torch.no_grad():
        theirs = model.bert.encoder.layer[layer](torch_tensor(x), attention_mask=additive_mask(padding_mask))
    np.testing.assert_allclose(keras.ops.convert_to_numpy(ours), theirs.numpy(), atol=1e-5, rtol=0)


def test_first_token_only_is_the_first_row_of_the_full_output(hf_and_ours):
    _, backbone, _ = hf_and_ours
    x, padding_mask = block_inputs(hf_and_ours)
    block = backbone.encoder_blocks[-1]
    full = keras.ops.convert_to_numpy(block(x, padding_mask))
    first = keras.ops.convert_to_numpy(block(x, padding_mask, first_token_only=True))
    assert first.shape == (x.shape[0], 1, x.shape[2])
    np.testing.assert_allclose(first, full[:, :1], atol=1e-6, rtol=0)


def test_padding_keys_change_nothing(hf_and_ours):
    """Longer padding, any token ids under it: the real tokens' outputs stay."""
    _, backbone, _ = hf_and_ours
    x, padding_mask = block_inputs(hf_and_ours)
    block = backbone.encoder_blocks[0]
    noise = np.random.default_rng(1).normal(size=(x.shape[0], 4, x.shape[2])).astype("float32")
    longer = block(np.concatenate([x, noise], axis=1), np.pad(padding_mask, ((0, 0), (0, 4))))
    real = padding_mask.astype(bool)
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(longer)[:, : x.shape[1]][real],
        keras.ops.convert_to_numpy(block(x, padding_mask))[real],
        atol=1e-6,
        rtol=0,
    )


@pytest.mark.backend_free
def test_a_width_the_heads_do_not_divide_is_refused():
    with pytest.raises(ValueError, match="hidden_dim=10 is not divisible by num_heads=4"):
        BertEncoderBlock(num_heads=4, intermediate_dim=16)(np.zeros((1, 3, 10), "float32"), np.ones((1, 3), "int32"))


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["right padding", "packed rows"])
def test_training_without_attention_dropout_gives_the_inference_values_and_gradients(hf_and_ours, layout):
    """With `attention_dropout=0` a JAX training step takes the fused attention
    kernel; inference keeps the block's own matmuls (on TensorFlow both do):
    the same values and input gradients within 1e-5 (dropout is 0 here)."""
    from keras_bert3.layers.packed_sequences import packed_attention_mask
    from tests.ops.gradients import value_and_gradients

    _, backbone, _ = hf_and_ours
    x, padding_mask = block_inputs(hf_and_ours)
    block = backbone.encoder_blocks[0]
    assert block.attention_dropout == 0
    if layout == "packed rows":  # Two pairs in the first row, one in the others; padding after.
        pair_ids = padding_mask.copy()
        pair_ids[0, 4:] = 2
        padding_mask = keras.ops.convert_to_numpy(packed_attention_mask(pair_ids))
    read = (padding_mask.any(-1) if padding_mask.ndim == 3 else np.ones(x.shape[:2], bool))[:, :, None]

    def block_at(training):
        return lambda inputs: block(inputs, padding_mask, training=training) * read.astype("float32")

    value, (grad,) = value_and_gradients(block_at(True), x)
    expected_value, (expected_grad,) = value_and_gradients(block_at(False), x)
    np.testing.assert_allclose(value, expected_value, atol=1e-5, rtol=0)
    assert np.abs(expected_grad).max() > 0.1
    np.testing.assert_allclose(grad, expected_grad, atol=1e-5, rtol=0)


def test_training_without_attention_dropout_gives_the_inference_weight_gradients(hf_and_ours):
    """A JAX training step computes query, key and value as three products of
    the `qkv` kernel's column blocks (`dense_product_blocks`): every weight's
    gradient is the inference path's (one product, then a split) within 1e-5."""
    from tests.ops.gradients import value_and_gradients

    _, backbone, _ = hf_and_ours
    x, padding_mask = block_inputs(hf_and_ours, seed=2)
    block = backbone.encoder_blocks[1]
    fixed = [v.value for v in block.non_trainable_variables]

    def block_at(training):
        return lambda *weights: block.stateless_call(list(weights), fixed, x, padding_mask, training=training)[0]

    weights = [v.value for v in block.trainable_variables]
    value, grads = value_and_gradients(block_at(True), *weights)
    expected_value, expected_grads = value_and_gradients(block_at(False), *weights)
    np.testing.assert_allclose(value, expected_value, atol=1e-5, rtol=0)
    names = [v.path for v in block.trainable_variables]
    assert any("qkv" in name for name in names)
    for name, ours, reference in zip(names, grads, expected_grads):
        assert np.abs(reference).max() > 1e-3, name
        np.testing.assert_allclose(ours, reference, atol=1e-5 * max(1.0, np.abs(reference).max()), rtol=0, err_msg=name)
