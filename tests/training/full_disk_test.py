"""A checkpoint, a preset or an export that finds the disk full ends in one
line naming it and the cause, exit code 2, no crash (h5py used to crash the
process, exit 139), no half-written folder left to fill the disk; and the
run's last checkpoint, intact, resumes elsewhere."""

import os
import shutil
import sys

import pytest

from tests import warm_commands
from tests.small_disk import small_disk
from tests.training.pretrain_command import REPO
from tests.training.pretrain_command import checkpoints
from tests.training.pretrain_command import command
from tests.training.pretrain_command import read_history
from tests.training.pretrain_command import with_flags

pytestmark = pytest.mark.both_backends  # The writes are the same on both backends: one pass is enough.


def run(args):
    """`python -m keras_bert3 ARGS` in a process of its own (a crash shows as a negative or 139 exit code)."""
    return warm_commands.run([sys.executable, "-m", "keras_bert3", *args], cwd=REPO, capture_output=True, text=True)


def said(result, command_name):
    """The command's own lines on stderr, and anything that looks like a crash or a traceback."""
    ours = [line for line in result.stderr.splitlines() if line.startswith(f"keras-bert3 {command_name}: ")]
    noise = [
        line for line in result.stderr.splitlines() if "Traceback" in line or "Segmentation" in line or "h5py" in line
    ]
    return ours, noise


def refusal(args):
    """The one line a command that must fail with exit code 2 says, having checked the code and that
    nothing else (a crash, a traceback) was said."""
    result = run(args)
    ours, noise = said(result, args[0])
    assert result.returncode == 2 and not noise, (result.returncode, result.stderr[-3000:])
    return ours


@pytest.mark.slow
def test_a_checkpoint_on_a_full_disk_fails_cleanly_and_the_last_one_resumes(tmp_path, small_corpus, run_vocabulary):
    """14 MB hold the vocabulary, the logs and one checkpoint of BERT-tiny
    with its optimizer (7.5 MB), not the second beside it."""
    with small_disk(tmp_path / "disk", 14) as disk:
        output = run_vocabulary(disk / "run")
        args = with_flags(command(output, small_corpus)[3:], steps=20, checkpoint_every=5)
        assert refusal(args) == [
            f"keras-bert3 pretrain: Cannot write the checkpoint {output}/backup/checkpoint-2: No space left on device. "
            f"The checkpoint before it, {output}/backup/checkpoint-1, is intact: free the space (or fix the folder) "
            "and run again to resume from it. (--debug shows where)"
        ]
        assert checkpoints(output) == (["checkpoint-1"], [])  # No half-written folder holds the space.
        moved = tmp_path / "run"
        shutil.copytree(output, moved)
    # Moved to a disk with room, the same run goes on from checkpoint 1.
    result = run(with_flags(args, output=moved))
    assert result.returncode == 0, result.stderr[-3000:]
    assert [int(row["step"]) for row in read_history(moved)] == [5, 10, 15, 20]


@pytest.mark.slow
def test_a_fine_tuned_preset_or_an_export_on_a_full_disk_fails_cleanly(tmp_path, minilm_dir, topics):
    """`finetune`, `export`, `convert` and `predict` on a 1 MB disk (full, for
    `predict`'s few rows): each says one line and leaves nothing under its
    output's name. About a minute: four commands, each in a process of its own
    (a crash inside h5py or TensorFlow must show as the process's exit code)."""
    import csv

    from keras_bert3.models.bert_classifier import BertClassifier
    from tests.tiny_preset import write_tiny_preset

    pretrained = write_tiny_preset(str(tmp_path / "pretrained"), minilm_dir)
    with open(tmp_path / "train.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["text", "label"])
        writer.writerows(
            (text, topics["class_names"][label])
            for text, label in zip(topics["train_texts"][:32], topics["train_labels"][:32])
        )
    finetune = [
        "finetune",
        "--preset",
        pretrained,
        "--train",
        str(tmp_path / "train.csv"),
        "--text-column",
        "text",
        "--label-column",
        "label",
        "--epochs",
        "1",
        "--sequence-length",
        "32",
        "--verbose",
        "0",
    ]
    with small_disk(tmp_path / "disk", 1) as disk:
        # Its first write is the first epoch's checkpoint (the preset is written after the run).
        assert refusal([*finetune, "--output", str(disk / "classifier")]) == [
            f"keras-bert3 finetune: Cannot write the checkpoint {disk}/classifier.checkpoints/backup/checkpoint-1: "
            "No space left on device. No checkpoint was written before it. (--debug shows where)"
        ]
        assert os.listdir(disk) == []  # No checkpoint to resume from: its folder (lock, settings) removed too.

        classifier = tmp_path / "classifier"  # What `finetune` writes, without the training.
        BertClassifier.from_preset(
            pretrained, num_classes=len(topics["class_names"]), sequence_length=32
        ).save_to_preset(str(classifier))
        assert refusal(["export", "--model", str(classifier), "--output", str(disk / "serving" / "1")]) == [
            f"keras-bert3 export: Cannot write the SavedModel {disk}/serving/1: No space left on device. "
            "Nothing was left behind. (--debug shows where)"
        ]
        assert os.listdir(disk / "serving") == []  # TF Serving, watching serving/, never sees a version.

        assert refusal(["convert", pretrained, str(disk / "converted")]) == [
            f"keras-bert3 convert: Cannot write the preset {disk}/converted: No space left on device. "
            "Nothing was left behind. (--debug shows where)"
        ]
        assert sorted(os.listdir(disk)) == ["serving"]

        with open(disk / "filler", "wb") as filler:  # The rest of the disk, to the last byte.
            with pytest.raises(OSError):
                while True:
                    filler.write(b"\0" * 65536)
                    filler.flush()
        predict = ["predict", "--model", str(classifier), "--input", str(tmp_path / "train.csv"), "--text-column"]
        predict += ["text", "--prediction-prefix", "predicted_"]  # The file has a `label` column.
        assert refusal([*predict, "--output", str(disk / "predictions.csv"), "--verbose", "0"]) == [
            f"keras-bert3 predict: Cannot write the predictions {disk}/predictions.csv: No space left on device. "
            "Nothing was left behind. (--debug shows where)"
        ]
        assert sorted(os.listdir(disk)) == ["filler", "serving"]
