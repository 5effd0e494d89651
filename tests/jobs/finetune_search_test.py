"""`keras-bert3 finetune --search`: KerasTuner's grid of fine-tuning runs on real labelled text. A chief and two
workers on localhost (KerasTuner's distributed mode) run each trial once and choose the trial with the best validation
figure; one process killed in its second trial and run again finishes that trial from its checkpoint, skipping the
first, and writes the same table."""

import csv
import json
import os
import signal
import subprocess
import sys

import pytest

from keras_bert3.cli import main
from tests import warm_commands
from tests.distribution.distribution_test import free_port
from tests.jobs.finetune_resume_test import BATCH_END
from tests.jobs.finetune_resume_test import stopped_at
from tests.training.pretrain_command import REPO

pytestmark = [pytest.mark.slow, pytest.mark.one_pass]  # Whole searches: the search's code is the same on both.


def search_arguments(task_files, output) -> list[str]:
    """A 2 x 1 x 1 grid (learning rate x batch size x epochs) of a classifier of docstring topics: two trials of 2
    steps, a checkpoint after each step."""
    return [
        "finetune", "--search", "--preset", str(task_files / "pretrained"), "--train", str(task_files / "train.csv"),
        "--validation", str(task_files / "validation.jsonl"), "--text-column", "sentence", "--label-column", "topic",
        "--output", str(output), "--sequence-length", "16", "--search-learning-rates", "3e-3,1e-4",
        "--search-batch-sizes", "32", "--search-epochs", "1", "--save-steps", "1", "--verbose", "0",
    ]  # fmt: skip


def table(output) -> list[dict]:
    with open(output / "search_trials.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def distributed(task_files, tmp_path_factory):
    """A search by a chief and two workers on localhost (KerasTuner's distributed mode), each its own process: its
    chosen preset, and the chief's and the workers' output."""
    output = tmp_path_factory.mktemp("search") / "chosen"
    port = str(free_port())
    processes = []
    for tuner in ("chief", "tuner0", "tuner1"):
        # KerasTuner's variables set in the process itself: the three share this environment, and so one warm server
        # (tests/warm_commands.py starts one per environment, a few in all, which other tests need too).
        variables = dict(KERASTUNER_TUNER_ID=tuner, KERASTUNER_ORACLE_IP="127.0.0.1", KERASTUNER_ORACLE_PORT=port)
        code = (
            f"import os, sys; os.environ.update({variables!r}); from keras_bert3.cli import main; "
            f"sys.exit(main({search_arguments(task_files, output)!r}))"
        )
        command = [sys.executable, "-c", code]
        processes.append(
            warm_commands.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        )
    results = [process.communicate(timeout=600) for process in processes]
    for process, (_, stderr) in zip(processes, results):
        assert process.returncode == 0, stderr[-3000:]
    return output, results


def test_a_chief_and_two_workers_run_each_trial_once_and_choose_the_best(distributed):
    output, results = distributed
    oracle = json.loads((output.parent / "chosen.search" / "oracle.json").read_text())
    assert oracle["run_times"] == {trial: 1 for trial in ("0000", "0001")}  # Each trial once.
    assert "Trial 0" not in results[0][0] + results[0][1]  # The workers ran them, not the chief.
    rows = table(output)
    assert {(r["learning_rate"], r["batch_size"]) for r in rows} == {("0.003", "32"), ("0.0001", "32")}
    accuracy = [float(row["val_accuracy"]) for row in rows]
    assert accuracy[0] == max(accuracy) and len(set(accuracy)) > 1
    best = output.parent / "chosen.search" / f"trial_{rows[0]['trial']}" / "preset"
    assert (output / "model.weights.h5").read_bytes() == (best / "model.weights.h5").read_bytes()
    assert (output / "search_trials.png").read_bytes()[:4] == b"\x89PNG"


def test_a_search_killed_in_its_second_trial_finishes_it(task_files, tmp_path, distributed, caplog):
    """In one process, killed and run again: the table of the uninterrupted (distributed) search."""
    output = tmp_path / "chosen"
    args = search_arguments(task_files, output)
    killed = stopped_at(BATCH_END, 3, "kill", args)  # The second trial's first step: checkpoint-0+1 written.
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    trials = tmp_path / "chosen.search"
    assert sorted(p.name for p in (trials / "trial_0001" / "preset.checkpoints" / "backup").iterdir()) == [
        "checkpoint-0+1"
    ]
    finished = (trials / "trial_0000" / "preset" / "model.weights.h5").stat().st_mtime_ns
    caplog.set_level("INFO", logger="keras_bert3")
    assert main(args) == 0
    ran = [message.split(":")[0] for message in caplog.messages if message.startswith("Trial ")]
    assert ran == ["Trial 0001"]
    assert any("Resumed from the checkpoint" in message and "trial_0001" in message for message in caplog.messages)
    assert (trials / "trial_0000" / "preset" / "model.weights.h5").stat().st_mtime_ns == finished
    assert table(output) == table(distributed[0])
