"""`keras-bert3 convert` and `keras-bert3 export-hf` on the real MiniLM
checkpoint: what they write holds the checkpoint's weights and vocabulary
exactly, and is written whole or not at all (killed before its rename, or
beside a second copy of itself); a damaged checkpoint is named in one line.
(A full disk under `convert`: tests/training/full_disk_test.py.)"""

import os
import shutil
import signal
import socket
import sys

import numpy as np
import pytest

from keras_bert3.cli import main
from tests import warm_commands
from tests.named_moment import FOLDER_RENAME
from tests.named_moment import moment_environment
from tests.warm_commands import started_and_waiting
from tests.training.pretrain_command import REPO

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


def test_a_folder_of_other_files_is_refused_before_anything_is_written(tmp_path, minilm_dir, capsys):
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


@pytest.mark.slow
def test_convert_then_export_hf_keep_every_weight_and_token_killed_or_beside_a_second_copy(tmp_path, minilm_dir):
    """Hugging Face -> keras_bert3 preset (`convert`) -> Hugging Face
    (`export-hf`), each command: SIGKILL with its folder written but not
    renamed leaves nothing under the output's name; then one copy waits there
    while a second runs whole (removing what the killed one left), and the
    first goes on and replaces it. What stays holds the checkpoint's weights
    and vocabulary to the bit, and nothing else is left beside it."""
    original = weights_and_vocabulary(minilm_dir)
    preset, exported = tmp_path / "preset", tmp_path / "hf"
    for command, output in (
        (["convert", minilm_dir, str(preset)], preset),
        (["export-hf", str(preset), str(exported)], exported),
    ):
        python = [sys.executable, "-m", "keras_bert3", *command]
        killed = warm_commands.run(
            python, cwd=REPO, env=moment_environment(FOLDER_RENAME, 1, "kill"), capture_output=True
        )
        assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
        left = os.listdir(tmp_path)
        assert output.name not in left and any(
            n.startswith(f"{output.name}.") and n.endswith(".partial") for n in left
        ), left

        first = started_and_waiting(python, FOLDER_RENAME, 1, cwd=REPO)
        assert main(command) == 0
        partial = f"{output.name}.{socket.gethostname()}.{first.pid}.partial"
        assert sorted(n for n in os.listdir(tmp_path) if n.startswith(output.name)) == [output.name, partial]
        first.send_signal(signal.SIGUSR1)  # Go on.
        _, stderr = first.communicate(timeout=120)
        assert first.returncode == 0, stderr[-3000:]
        assert sorted(n for n in os.listdir(tmp_path) if n.startswith(output.name)) == [output.name]
        assert_the_same(weights_and_vocabulary(output), original)
    assert sorted(os.listdir(tmp_path)) == ["hf", "preset"]
