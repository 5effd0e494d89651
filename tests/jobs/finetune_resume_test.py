"""`keras-bert3 finetune` killed or stopped mid-epoch and run again ends as an
uninterrupted run does: the same history and weights (fixed seeds). The
kill and the signal come at named moments (tests/named_moment.py).

One pass (`one_pass`): the run folder, the lock, the replayed history and
the training stream's position are the same code on either backend; each
backend's restore of a fit's state is tested: TensorFlow's here and by the
kill chain of tests/training/pretraining_run_test.py, the others' by
tests/training/resumable_backup_test.py and by the mid-epoch resume there."""

import csv
import logging
import signal
import subprocess
import sys

import h5py
import numpy as np
import pytest

from keras_bert3.cli import main
from tests import warm_commands
from tests.named_moment import moment_environment
from tests.warm_commands import started_and_waiting
from tests.training.pretrain_command import REPO

# Between two steps of a fine-tuning (ResumableBackup's batch end, after it ran).
BATCH_END = ("keras_bert3.training.resumable_backup:ResumableBackup.on_train_batch_end", "after")


def arguments(task_files, output) -> list[str]:
    """3 epochs of 4 steps (64 texts, batch 16), early stopping watching the validation file."""
    return [
        "finetune", "--preset", str(task_files / "pretrained"), "--train", str(task_files / "train.csv"),
        "--validation", str(task_files / "validation.jsonl"), "--text-column", "sentence", "--label-column", "topic",
        "--output", str(output), "--epochs", "3", "--batch-size", "16", "--sequence-length", "32",
        "--learning-rate", "1e-3", "--patience", "2", "--verbose", "0",
    ]  # fmt: skip


def stopped_at(moment, call: int, then: str, args) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "keras_bert3", *args]
    return warm_commands.run(
        command, cwd=REPO, env=moment_environment(moment, call, then), capture_output=True, text=True
    )


def history(preset) -> list[dict]:
    with open(preset / "finetuning_history.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def weights(preset) -> dict:
    arrays = {}
    for path in sorted(preset.glob("*.weights.h5")):
        with h5py.File(path, "r") as f:
            f.visititems(
                lambda k, item: arrays.__setitem__((path.name, k), item[()]) if isinstance(item, h5py.Dataset) else None
            )
    return arrays


@pytest.mark.slow
@pytest.mark.one_pass
def test_killed_then_stopped_mid_epoch_resumes_to_the_uninterrupted_history_and_weights_and_says_from_where(
    task_files, tmp_path, capsys, caplog
):
    """And a second copy of the command, while the resumed run waits at its
    first step, is refused in one line (exit 2) and leaves it to go on. Each
    resumed run says which checkpoint and step it went on from."""
    assert main(arguments(task_files, tmp_path / "uninterrupted")) == 0
    output = tmp_path / "run"
    args = arguments(task_files, output)
    killed = stopped_at(BATCH_END, 6, "kill", args)  # The 2nd step of epoch 2: checkpoint-1 on disk.
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    assert sorted(p.name for p in (tmp_path / "run.checkpoints" / "backup").iterdir()) == ["checkpoint-1"]
    resumed = started_and_waiting([sys.executable, "-m", "keras_bert3", *args], BATCH_END, 1, cwd=REPO)  # Its 1st step.
    capsys.readouterr()
    assert main(args) == 2
    refused = capsys.readouterr().err.strip().splitlines()
    assert len(refused) == 1 and "run.checkpoints is in use by another run (pid " in refused[0], refused
    resumed.send_signal(signal.SIGTERM)  # Stopped at the end of the step under way: written at its second.
    _, stderr = resumed.communicate(timeout=300)
    backup = tmp_path / "run.checkpoints" / "backup"
    assert resumed.returncode == 128 + signal.SIGTERM, stderr[-3000:]
    assert "wrote the checkpoint" in stderr and not output.exists()
    assert sorted(p.name for p in (tmp_path / "run.checkpoints" / "backup").iterdir()) == ["checkpoint-1+2"]
    caplog.set_level(logging.INFO, logger="keras_bert3")
    assert main(args) == 0
    assert f"Resumed from the checkpoint {backup / 'checkpoint-1+2'} at step 6." in caplog.messages
    assert history(output) == history(tmp_path / "uninterrupted") and len(history(output)) == 3
    ours, reference = weights(output), weights(tmp_path / "uninterrupted")
    assert ours.keys() == reference.keys() and len(ours) > 10
    for key, value in reference.items():
        np.testing.assert_allclose(ours[key], value, atol=1e-6, err_msg=str(key))
    assert not (tmp_path / "run.checkpoints").exists()
