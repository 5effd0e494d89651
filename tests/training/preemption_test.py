"""The `keras-bert3` command passes SIGTERM (what Kubernetes and SLURM send)
and SIGINT on to the run, which finishes its step, writes a checkpoint of it,
says so in one line and exits with 128 + the signal; the same command then
resumes from it. (That the resumed run ends with an uninterrupted run's
history and weights, to the bit, after a SIGTERM mid-epoch: the `sigterm`
moment of tests/training/pretraining_run_test.py, on both backends.)"""

import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from tests.training.pretrain_command import REPO
from tests.training.pretrain_command import checkpoints
from tests.training.pretrain_command import command

pytestmark = pytest.mark.both_backends  # The launcher loads no backend; one pass is enough.


def stopped_by(signal_number, arguments, output, after_checkpoint):
    """Starts `keras-bert3 ARGUMENTS`, sends the launcher `signal_number` once
    `after_checkpoint` is on disk, and returns the checkpoint the run wrote and its step."""
    launcher = shutil.which("keras-bert3")
    assert launcher, "the keras-bert3 command is not installed: pip install -e ."
    environment = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "KERAS_BERT3_DEBUG")}
    process = subprocess.Popen(
        [launcher, *arguments], cwd=REPO, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 300
    while after_checkpoint not in checkpoints(output)[0] and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert process.poll() is None, process.communicate()[1][-3000:]
    sent = time.monotonic()
    process.send_signal(signal_number)  # To the launcher alone, as Kubernetes signals a container's first process.
    _, stderr = process.communicate(timeout=120)
    assert time.monotonic() - sent < 60  # A step and a checkpoint of BERT-tiny, not the rest of the run.
    assert process.returncode == 128 + signal_number, (process.returncode, stderr[-3000:])
    [latest], partial = checkpoints(output)
    assert partial == [] and latest != after_checkpoint  # A checkpoint of the step the signal found.
    with open(output / "backup" / latest / "training_metadata.json", encoding="utf-8") as f:
        step = json.load(f)["step"]
    assert [line for line in stderr.splitlines() if line.startswith("keras-bert3 ")] == [
        f"keras-bert3 pretrain: Stopped by {signal.Signals(signal_number).name} at step {step}: wrote the checkpoint "
        f"{output}/backup/{latest}. Run the same command to resume from it."
    ], stderr[-3000:]
    return latest, step


@pytest.mark.slow
def test_a_signal_to_the_command_ends_the_run_with_a_checkpoint_of_its_step(tmp_path, small_corpus, run_vocabulary):
    output = run_vocabulary(tmp_path / "run")
    arguments = command(output, small_corpus)[3:]
    first, first_step = stopped_by(signal.SIGTERM, arguments, output, after_checkpoint="checkpoint-1")
    # The same command resumes from that checkpoint; Ctrl-C (SIGINT) stops it the same way.
    second, second_step = stopped_by(signal.SIGINT, arguments, output, after_checkpoint="checkpoint-3")
    assert 10 < first_step < 30 < second_step
