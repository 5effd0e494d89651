"""keras_bert3 presets: save, load, and what happens with broken ones."""

import os

import numpy as np
import pytest

from keras_bert3.models.bert_backbone import BertBackbone


def tiny_backbone(**overrides):
    config = dict(
        vocabulary_size=60, num_layers=2, num_heads=2, hidden_dim=16, intermediate_dim=32, max_sequence_length=32
    )
    config.update(overrides)
    return BertBackbone(**config)


def inputs():
    rng = np.random.default_rng(3)
    return {
        "token_ids": rng.integers(0, 60, (2, 9)).astype("int32"),
        "segment_ids": np.array([[0] * 5 + [1] * 4] * 2, "int32"),
        "padding_mask": np.array([[1] * 9, [1] * 6 + [0] * 3], "int32"),
    }


def test_save_then_load_gives_identical_outputs(tmp_path):
    backbone = tiny_backbone(activation="gelu_approximate", layer_norm_epsilon=1e-6)
    backbone.save_to_preset(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["config.json", "metadata.json", "model.weights.h5"]
    restored = BertBackbone.from_preset(str(tmp_path))
    assert restored.get_config() == backbone.get_config()
    expected = backbone.predict(inputs(), verbose=0)
    actual = restored.predict(inputs(), verbose=0)
    for key in expected:
        np.testing.assert_array_equal(actual[key], expected[key])


def test_from_preset_overrides_config(tmp_path):
    tiny_backbone().save_to_preset(str(tmp_path))
    assert BertBackbone.from_preset(str(tmp_path), dropout=0.0).dropout == 0.0


def test_missing_weights_are_named(tmp_path):
    tiny_backbone().save_to_preset(str(tmp_path))
    os.remove(tmp_path / "model.weights.h5")
    with pytest.raises(FileNotFoundError, match="model.weights.h5"):
        BertBackbone.from_preset(str(tmp_path))


def test_weights_of_another_size_are_refused(tmp_path):
    tiny_backbone().save_to_preset(str(tmp_path / "a"))
    tiny_backbone(intermediate_dim=48).save_to_preset(str(tmp_path / "b"))
    os.replace(tmp_path / "b" / "model.weights.h5", tmp_path / "a" / "model.weights.h5")
    with pytest.raises(
        ValueError,
        match=r"model.weights.h5 holds weights that do not fit this model \(A total of 4 objects could not be loaded",
    ):
        BertBackbone.from_preset(str(tmp_path / "a"))


def test_not_a_preset_says_what_it_found(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ValueError, match="not a BERT preset.*notes.txt"):
        BertBackbone.from_preset(str(tmp_path))


def test_unknown_name_lists_the_ways_to_give_a_preset():
    with pytest.raises(FileNotFoundError, match="not a local directory.*hf://.*from_size"):
        BertBackbone.from_preset("bert_gigantic")


@pytest.mark.parametrize(
    "handle", ["hf://google-bert/bert-base-uncased", "kaggle://keras/bert/keras/bert_base_en", "bert_base_uncased"]
)
def test_remote_handles_without_network_say_how_to_pass_a_directory(handle):
    # conftest switches the network off (KERAS_BERT3_OFFLINE=1): nothing is fetched.
    with pytest.raises(OSError, match="pass its path"):
        BertBackbone.from_preset(handle)
