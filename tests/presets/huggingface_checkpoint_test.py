"""Hugging Face checkpoints in and out, checked against `transformers` (PyTorch)."""

import json
import os
import re
import shutil

import numpy as np
import pytest
import keras

from keras_bert3.layers.bert_masked_lm_head import BertMaskedLMHead
from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.presets.huggingface_checkpoint import export_backbone_to_huggingface
from keras_bert3.presets.huggingface_checkpoint import load_huggingface_heads
from tests.hf_helpers import hf_inputs
from tests.hf_helpers import hf_outputs
from tests.hf_helpers import max_abs_diff
from tests.hf_helpers import tiny_hf_config
from tests.real_sentences import real_sentences
from tests.reference import import_reference


def predict(backbone, inputs):
    return backbone.predict(inputs, verbose=0)


@pytest.mark.slow
@pytest.mark.cpu_numerics
def test_minilm_matches_transformers_on_real_sentences(minilm_dir):
    transformers = import_reference("transformers")
    texts = real_sentences(12)
    inputs = hf_inputs(minilm_dir, texts[:6], texts[6:])
    assert inputs["padding_mask"].min() == 0  # Lengths differ: padding is exercised.
    ours = predict(BertBackbone.from_preset(minilm_dir), inputs)
    theirs = hf_outputs(transformers.BertModel.from_pretrained(minilm_dir), inputs)
    assert max_abs_diff(ours["sequence_output"], theirs.last_hidden_state) < 1e-4
    assert max_abs_diff(ours["pooled_output"], theirs.pooler_output) < 1e-4


@pytest.mark.backend_free
def test_minilm_config_is_read_from_the_checkpoint(minilm_dir):
    with open(os.path.join(minilm_dir, "config.json")) as f:
        config = json.load(f)
    backbone = BertBackbone.from_preset(minilm_dir)
    assert backbone.num_layers == config["num_hidden_layers"]
    assert backbone.hidden_dim == config["hidden_size"]
    assert backbone.layer_norm_epsilon == config["layer_norm_eps"]
    assert backbone.activation == "gelu"  # hidden_act "gelu" is the exact erf GELU.


@pytest.mark.slow
@pytest.mark.cpu_numerics
@pytest.mark.parametrize("hidden_act", ["gelu", "gelu_new", "relu"])
def test_random_checkpoint_with_pretraining_heads_matches_transformers(tmp_path, hidden_act):
    transformers = import_reference("transformers")
    config = tiny_hf_config(hidden_act=hidden_act, layer_norm_eps=1e-7)
    reference = transformers.BertForPreTraining(config)
    reference.save_pretrained(tmp_path)  # Keys carry the "bert." prefix and the heads.
    rng = np.random.default_rng(0)
    inputs = {
        "token_ids": rng.integers(1, 120, (3, 11)).astype("int32"),
        "segment_ids": np.repeat([[0] * 6 + [1] * 5], 3, axis=0).astype("int32"),
        "padding_mask": np.array([[1] * 11, [1] * 8 + [0] * 3, [1] * 4 + [0] * 7], "int32"),
    }
    backbone = BertBackbone.from_preset(str(tmp_path))
    assert backbone.layer_norm_epsilon == 1e-7
    mlm_head = BertMaskedLMHead(backbone.token_embedding, activation=backbone.activation, layer_norm_epsilon=1e-7)
    nsp_head = keras.layers.Dense(2)
    outputs = backbone(inputs)
    positions = np.array([[0, 3, 5], [1, 2, 7], [0, 1, 3]], "int32")
    mlm_head.build(outputs["sequence_output"].shape)
    nsp_head.build(outputs["pooled_output"].shape)
    assert load_huggingface_heads(str(tmp_path), mlm_head, nsp_head) == ["masked_lm", "next_sentence"]

    theirs = hf_outputs(reference, inputs)
    mlm_logits = keras.ops.convert_to_numpy(mlm_head(outputs["sequence_output"], positions))
    expected = np.take_along_axis(theirs.prediction_logits.numpy(), positions[:, :, None], axis=1)
    assert max_abs_diff(mlm_logits, expected) < 1e-4
    nsp_logits = keras.ops.convert_to_numpy(nsp_head(outputs["pooled_output"]))
    assert max_abs_diff(nsp_logits, theirs.seq_relationship_logits) < 1e-4


def test_export_to_huggingface_loads_in_transformers(tmp_path, minilm_dir):
    transformers = import_reference("transformers")
    backbone = BertBackbone.from_preset(minilm_dir)
    with open(os.path.join(minilm_dir, "vocab.txt"), encoding="utf-8") as f:
        vocabulary = f.read().splitlines()
    export_backbone_to_huggingface(backbone, str(tmp_path), vocabulary=vocabulary, lowercase=True)
    texts = real_sentences(6)
    inputs = hf_inputs(str(tmp_path), texts)  # The exported tokenizer files load too.
    original = hf_inputs(minilm_dir, texts)
    for key in inputs:
        np.testing.assert_array_equal(inputs[key], original[key])
    theirs = hf_outputs(transformers.BertModel.from_pretrained(str(tmp_path)), inputs)
    ours = predict(backbone, inputs)
    real = inputs["padding_mask"].astype(bool)  # Outputs at padding are undefined (garbage in both).
    assert max_abs_diff(ours["sequence_output"][real], np.asarray(theirs.last_hidden_state)[real]) < 1e-4
    assert max_abs_diff(ours["pooled_output"], theirs.pooler_output) < 1e-4


def test_export_keeps_the_tanh_gelu(tmp_path):
    transformers = import_reference("transformers")
    backbone = BertBackbone(97, 2, 2, 16, 32, activation="gelu_approximate", max_sequence_length=20)
    export_backbone_to_huggingface(backbone, str(tmp_path))
    reference = transformers.BertModel.from_pretrained(str(tmp_path))
    inputs = {
        "token_ids": np.arange(1, 13, dtype="int32").reshape(2, 6),
        "segment_ids": np.zeros((2, 6), "int32"),
        "padding_mask": np.array([[1] * 6, [1] * 3 + [0] * 3], "int32"),
    }
    ours = predict(backbone, inputs)
    theirs = hf_outputs(reference, inputs)
    assert max_abs_diff(ours["sequence_output"], theirs.last_hidden_state) < 1e-5


def test_a_checkpoint_without_a_pooler_loads_and_the_pooler_keeps_its_initial_weights(tmp_path):
    """A `BertForMaskedLM` checkpoint has no pooler: every other weight is the checkpoint's, and the pooler, which the
    load leaves alone, holds its initializer's random weights (truncated normal, stddev 0.02), as a new model does."""
    transformers = import_reference("transformers")
    reference = transformers.BertForMaskedLM(tiny_hf_config())
    reference.save_pretrained(tmp_path)
    backbone = BertBackbone.from_preset(tmp_path)
    word_embeddings = reference.bert.embeddings.word_embeddings.weight.detach().numpy()
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(backbone.embeddings.token_embedding.embeddings), word_embeddings
    )
    pooler = keras.ops.convert_to_numpy(backbone.pooler.kernel)
    assert np.isfinite(pooler).all() and 0.01 < pooler.std() < 0.03 and np.abs(pooler).max() <= 0.04
    outputs = predict(
        backbone,
        {
            "token_ids": np.ones((2, 5), "int32"),
            "segment_ids": np.zeros((2, 5), "int32"),
            "padding_mask": np.ones((2, 5), "int32"),
        },
    )
    assert np.isfinite(outputs["pooled_output"]).all() and np.abs(outputs["pooled_output"]).max() > 0


@pytest.mark.backend_free
def test_legacy_gamma_beta_names_are_read(tmp_path, minilm_dir):
    from safetensors.numpy import load_file
    from safetensors.numpy import save_file

    tensors = load_file(os.path.join(minilm_dir, "model.safetensors"))
    renamed = {}
    for key, value in tensors.items():
        key = key.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")
        renamed["bert." + key] = value
    save_file(renamed, str(tmp_path / "model.safetensors"))
    shutil.copy(os.path.join(minilm_dir, "config.json"), tmp_path)
    legacy = BertBackbone.from_preset(str(tmp_path))
    current = BertBackbone.from_preset(minilm_dir)
    for a, b in zip(legacy.weights, current.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


# === Bad input ===


def copy_config(minilm_dir, target, **changes):
    with open(os.path.join(minilm_dir, "config.json")) as f:
        config = json.load(f)
    config.update(changes)
    with open(os.path.join(target, "config.json"), "w") as f:
        json.dump(config, f)


@pytest.mark.backend_free
def test_pickled_weights_are_refused_with_a_way_out(tmp_path, minilm_dir):
    copy_config(minilm_dir, tmp_path)
    (tmp_path / "pytorch_model.bin").write_bytes(b"not even read")
    with pytest.raises(ValueError, match="pickle.*safetensors"):
        BertBackbone.from_preset(str(tmp_path))


@pytest.mark.backend_free
def test_missing_weights_are_named(tmp_path, minilm_dir):
    copy_config(minilm_dir, tmp_path)
    with pytest.raises(FileNotFoundError, match="model.safetensors"):
        BertBackbone.from_preset(str(tmp_path))


@pytest.mark.backend_free
def test_unknown_model_type_is_named(tmp_path, minilm_dir):
    copy_config(minilm_dir, tmp_path, model_type="roberta")
    shutil.copy(os.path.join(minilm_dir, "model.safetensors"), tmp_path)
    with pytest.raises(ValueError, match="model_type='roberta'"):
        BertBackbone.from_preset(str(tmp_path))


@pytest.mark.backend_free
def test_weights_of_another_size_are_named(tmp_path, minilm_dir):
    copy_config(minilm_dir, tmp_path, intermediate_size=1024)
    shutil.copy(os.path.join(minilm_dir, "model.safetensors"), tmp_path)
    with pytest.raises(ValueError, match=r"intermediate\.dense\.weight.*\(1536, 384\)"):
        BertBackbone.from_preset(str(tmp_path))


# === Sharded checkpoints (model.safetensors.index.json), as `save_pretrained` writes them past its shard size ===


def write_sharded_minilm(
    minilm_dir, target, *, names=("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")
):
    """MiniLM's tensors split over two shard files beside an index, as `transformers` writes a large checkpoint."""
    from safetensors.numpy import load_file
    from safetensors.numpy import save_file

    tensors = load_file(os.path.join(minilm_dir, "model.safetensors"))
    keys = sorted(tensors)
    halves = {names[0]: keys[: len(keys) // 2], names[1]: keys[len(keys) // 2 :]}
    for name, chosen in halves.items():
        if not os.path.isabs(name) and ".." not in name:
            save_file({key: tensors[key] for key in chosen}, str(target / name))
    index = {"metadata": {}, "weight_map": {key: name for name, chosen in halves.items() for key in chosen}}
    (target / "model.safetensors.index.json").write_text(json.dumps(index), encoding="utf-8")
    shutil.copy(os.path.join(minilm_dir, "config.json"), target)


@pytest.mark.backend_free
def test_a_sharded_checkpoint_loads_the_same_weights(tmp_path, minilm_dir):
    write_sharded_minilm(minilm_dir, tmp_path)
    sharded = BertBackbone.from_preset(str(tmp_path))
    whole = BertBackbone.from_preset(minilm_dir)
    for a, b in zip(sharded.weights, whole.weights):
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b))


@pytest.mark.backend_free
@pytest.mark.parametrize("shard", ["../elsewhere/x.safetensors", "/dev/zero", "sub/../../x.safetensors"])
def test_security_a_shard_outside_the_checkpoint_folder_is_refused(tmp_path, minilm_dir, shard):
    """A checkpoint's index may only name files beside it: a `..` or an absolute path would read any file."""
    (tmp_path / "elsewhere").mkdir()
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    write_sharded_minilm(minilm_dir, checkpoint, names=("model-00001-of-00002.safetensors", shard))
    with pytest.raises(
        ValueError, match=re.escape(f"names the shard {shard!r}, outside the checkpoint's folder: refused")
    ):
        BertBackbone.from_preset(str(checkpoint))


@pytest.mark.backend_free
@pytest.mark.parametrize(
    "index, message",
    [
        ('{"metadata": {}}', "has no 'weight_map'"),
        ('{"metadata": {}, "weight_map": {"embeddings', "is not valid JSON .*truncated or damaged"),
        (
            '{"weight_map": {"a": "model-00003-of-00003.safetensors"}}',
            "names the shard 'model-00003-of-00003.safetensors', which is not in",
        ),
    ],
)
def test_copied_model_a_damaged_index_is_named(tmp_path, minilm_dir, index, message):
    write_sharded_minilm(minilm_dir, tmp_path)
    (tmp_path / "model.safetensors.index.json").write_text(index, encoding="utf-8")
    with pytest.raises((ValueError, FileNotFoundError), match=f"model.safetensors.index.json {message}"):
        BertBackbone.from_preset(str(tmp_path))
