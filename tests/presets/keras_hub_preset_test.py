"""keras-hub BERT presets in, checked against keras-hub's own model."""

import numpy as np
import keras_hub
import pytest

from keras_bert3.models.bert_backbone import BertBackbone
from tests.hf_helpers import max_abs_diff


@pytest.mark.slow
def test_keras_hub_preset_gives_keras_hub_outputs(tmp_path):
    theirs = keras_hub.models.BertBackbone(
        vocabulary_size=150,
        num_layers=2,
        num_heads=4,
        hidden_dim=32,
        intermediate_dim=64,
        max_sequence_length=24,
    )
    theirs.save_to_preset(str(tmp_path))
    ours = BertBackbone.from_preset(str(tmp_path))
    assert ours.activation == "gelu_approximate"
    rng = np.random.default_rng(1)
    inputs = {
        "token_ids": rng.integers(1, 150, (3, 16)).astype("int32"),
        "segment_ids": np.repeat([[0] * 9 + [1] * 7], 3, axis=0).astype("int32"),
        "padding_mask": np.array([[1] * 16, [1] * 10 + [0] * 6, [1] * 3 + [0] * 13], "int32"),
    }
    expected = theirs.predict(inputs, verbose=0)
    actual = ours.predict(inputs, verbose=0)
    mask = inputs["padding_mask"][..., None].astype(bool)
    assert (
        max_abs_diff(np.where(mask, actual["sequence_output"], 0), np.where(mask, expected["sequence_output"], 0))
        < 1e-5
    )
    assert max_abs_diff(actual["pooled_output"], expected["pooled_output"]) < 1e-5
