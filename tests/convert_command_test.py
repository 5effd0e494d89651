"""`keras-bert3 convert` and `keras-bert3 export-hf` on the real MiniLM
checkpoint: what they write holds the checkpoint's weights and vocabulary
exactly, and is written whole or not at all; a damaged checkpoint is named
in one line. (A full disk under `convert`: tests/training/full_disk_test.py.)"""

import os
import shutil

import numpy as np
import pytest

from keras_bert3.cli import main

pytestmark = pytest.mark.one_pass  # Files in, files out: the same code on either backend.


def errors(capsys, command_name):
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith(f"keras-bert3 {command_name}: ")]


def weights_and_vocabulary(preset):
    from keras_bert3.models.bert_backbone import BertBackbone
    from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer

    backbone = BertBackbone.from_preset(preset)
    return {w.path: w.numpy() for w in backbone.weights}, BertTokenizer.from_preset(preset).get_vocabulary()


def assert_the_same(written, original):
    (weights, vocabulary), (original_weights, original_vocabulary) = written, original
    assert vocabulary == original_vocabulary
    assert weights.keys() == original_weights.keys() and len(weights) > 50
    for name, value in original_weights.items():
        assert np.array_equal(weights[name], value), name


def test_convert_then_export_hf_keeps_every_weight_and_token(tmp_path, minilm_dir, capsys):
    """Hugging Face -> keras_bert3 preset -> Hugging Face: the weights and the
    vocabulary come back to the bit; converting again replaces the preset
    whole; a folder of other files is refused before anything is written."""
    preset, exported = tmp_path / "preset", tmp_path / "hf"
    assert main(["convert", minilm_dir, str(preset)]) == 0
    assert main(["export-hf", str(preset), str(exported)]) == 0
    assert sorted(os.listdir(tmp_path)) == ["hf", "preset"]  # No temporary folder left beside them.
    original = weights_and_vocabulary(minilm_dir)
    for written in (preset, exported):
        assert_the_same(weights_and_vocabulary(written), original)

    assert main(["convert", str(exported), str(preset)]) == 0  # Over its own earlier output: replaced.
    assert_the_same(weights_and_vocabulary(preset), original)

    other = tmp_path / "notes"
    other.mkdir()
    (other / "notes.txt").write_text("mine", encoding="utf-8")
    capsys.readouterr()
    assert main(["convert", minilm_dir, str(other)]) == 2
    assert errors(capsys, "convert") == [
        f"keras-bert3 convert: {other} is a folder of other files (no config.json), which writing the preset "
        "there would replace: give a new folder, or remove it first. (--debug shows where)"
    ]
    assert os.listdir(other) == ["notes.txt"]


def test_a_truncated_checkpoint_is_named_and_nothing_is_written(tmp_path, minilm_dir, capsys):
    damaged = tmp_path / "damaged"
    shutil.copytree(minilm_dir, damaged)
    weights = damaged / "model.safetensors"
    with open(weights, "r+b") as f:
        f.truncate(os.path.getsize(weights) // 2)
    capsys.readouterr()
    assert main(["convert", str(damaged), str(tmp_path / "preset")]) == 2
    said = errors(capsys, "convert")
    assert len(said) == 1 and str(weights) in said[0], said
    assert not (tmp_path / "preset").exists()
