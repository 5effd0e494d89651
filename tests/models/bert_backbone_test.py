"""BertBackbone: sizes, config, batching, and its input checks."""

import numpy as np
import pytest
import keras

from keras_bert3.layers.bert_encoder_block import BertEncoderBlock
from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.bert_sizes import BERT_SIZES
from keras_bert3.upstream.loaded_variables import give_value
from keras_bert3.upstream.loaded_variables import values_loaded_next


def tiny_backbone(**overrides):
    config = dict(
        vocabulary_size=50, num_layers=2, num_heads=2, hidden_dim=8, intermediate_dim=16, max_sequence_length=16
    )
    config.update(overrides)
    return BertBackbone(**config)


def batch(rows=3, length=7, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, length + 1, rows)
    lengths[0] = length
    mask = (np.arange(length)[None, :] < lengths[:, None]).astype("int32")
    return {
        "token_ids": (rng.integers(1, 50, (rows, length)) * mask).astype("int32"),
        "segment_ids": (np.arange(length)[None, :] >= length // 2).astype("int32").repeat(rows, 0),
        "padding_mask": mask,
    }


@pytest.mark.parametrize("size, expected", [("base", 109_482_240), ("large", 335_141_888)])
@pytest.mark.backend_free
@pytest.mark.slow
def test_standard_sizes_count_the_reference_parameters(size, expected):
    # The parameter counts of Google's BERT-Base and BERT-Large (with pooler). A count is of shapes: each variable
    # gets zeros instead of its random initial values (BERT-Large's drew them in about a minute of CPU on JAX).
    with values_loaded_next():
        backbone = BertBackbone.from_size(size)
        for variable in backbone.weights:
            give_value(variable, np.zeros(variable.shape, variable.dtype))
    assert backbone.count_params() == expected


@pytest.mark.backend_free
def test_turc_sizes_shapes():
    for name, size in BERT_SIZES.items():
        assert size.num_heads * 64 == size.hidden_dim
    backbone = BertBackbone.from_size("tiny", vocabulary_size=100)
    assert (backbone.num_layers, backbone.hidden_dim, backbone.num_heads) == (2, 128, 2)


def test_outputs_and_config_round_trip():
    backbone = tiny_backbone(activation="gelu_approximate", attention_dropout=0.0)
    outputs = backbone(batch())
    assert outputs["sequence_output"].shape == (3, 7, 8)
    assert outputs["pooled_output"].shape == (3, 8)
    clone = BertBackbone.from_config(backbone.get_config())
    assert clone.get_config() == backbone.get_config()
    assert clone.count_params() == backbone.count_params()


@pytest.mark.slow
def test_padding_does_not_change_real_tokens():
    backbone = tiny_backbone()
    inputs = batch(rows=1, length=5)
    padded = {k: np.pad(v, ((0, 0), (0, 4))) for k, v in inputs.items()}
    short = keras.ops.convert_to_numpy(backbone(inputs)["sequence_output"])
    long = keras.ops.convert_to_numpy(backbone(padded)["sequence_output"])
    np.testing.assert_allclose(long[:, :5], short, atol=1e-6)


def test_batched_equals_one_by_one():
    backbone = tiny_backbone()
    inputs = batch(rows=4)
    together = backbone.predict(inputs, verbose=0)["pooled_output"]
    for i in range(4):
        alone = backbone.predict({k: v[i : i + 1] for k, v in inputs.items()}, verbose=0)["pooled_output"]
        np.testing.assert_allclose(alone[0], together[i], atol=1e-6)


def test_training_without_dropout_equals_inference():
    # With the dropout layers switched to rate 0, training mode changes nothing.
    block = BertEncoderBlock(num_heads=2, intermediate_dim=16, dropout=0.0, attention_dropout=0.3)
    x = np.random.default_rng(0).normal(size=(2, 6, 8)).astype("float32")
    mask = np.array([[1] * 6, [1] * 3 + [0] * 3], "int32")
    inference = keras.ops.convert_to_numpy(block(x, mask, training=False))
    block.probs_dropout.rate = 0.0
    training = keras.ops.convert_to_numpy(block(x, mask, training=True))
    np.testing.assert_allclose(training, inference, atol=1e-5)


@pytest.mark.slow
def test_pooled_output_alone_equals_the_full_pass():
    # The last block computes the [CLS] row alone; padding keys stay masked.
    backbone = tiny_backbone(dropout=0.0, num_layers=3)
    inputs = batch(rows=4)
    assert inputs["padding_mask"].min() == 0
    for training in (False, True):
        full = keras.ops.convert_to_numpy(backbone(inputs, training=training)["pooled_output"])
        alone = keras.ops.convert_to_numpy(backbone.pooled_output(inputs, training=training))
        np.testing.assert_allclose(alone, full, atol=1e-6)


def test_first_token_only_block_is_the_first_row_of_the_full_block():
    block = BertEncoderBlock(num_heads=2, intermediate_dim=16)
    x = np.random.default_rng(0).normal(size=(2, 6, 8)).astype("float32")
    mask = np.array([[1] * 6, [1] * 3 + [0] * 3], "int32")
    full = keras.ops.convert_to_numpy(block(x, mask))
    first = keras.ops.convert_to_numpy(block(x, mask, first_token_only=True))
    assert first.shape == (2, 1, 8)
    np.testing.assert_allclose(first, full[:, :1], atol=1e-6)


def test_dropout_is_active_only_in_training():
    backbone = tiny_backbone(dropout=0.5)
    inputs = batch()
    a = keras.ops.convert_to_numpy(backbone(inputs, training=False)["pooled_output"])
    b = keras.ops.convert_to_numpy(backbone(inputs, training=False)["pooled_output"])
    c = keras.ops.convert_to_numpy(backbone(inputs, training=True)["pooled_output"])
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_sequences_longer_than_the_positions_are_refused():
    backbone = tiny_backbone(max_sequence_length=16)
    with pytest.raises(ValueError, match="17 tokens per sequence but this model has only 16 positions"):
        backbone(batch(rows=2, length=17))


@pytest.mark.backend_free
def test_bad_sizes_are_named():
    with pytest.raises(ValueError, match="not divisible by num_heads"):
        tiny_backbone(hidden_dim=10, num_heads=3)
    with pytest.raises(ValueError, match="Unknown activation 'gelu_tanh'"):
        tiny_backbone(activation="gelu_tanh")
    with pytest.raises(ValueError, match="num_layers=0: a BERT backbone needs at least one encoder block"):
        tiny_backbone(num_layers=0)
    with pytest.raises(ValueError, match="Unknown BERT size 'huge'"):
        BertBackbone.from_size("huge")
