"""The `keras-bert3` command passes SIGTERM (what Kubernetes and SLURM send)
and SIGINT on to the run, which finishes its step, writes a checkpoint of it,
says so in one line and exits with 128 + the signal; the same command then
resumes. (That the resumed run ends with an uninterrupted run's history and
weights, to the bit, after a SIGTERM mid-epoch: the `sigterm` moment of
tests/training/pretraining_run_test.py.)"""

import os
import shutil
import signal
import subprocess
import time

import pytest

from tests.training.pretrain_command import REPO
from tests.training.pretrain_command import checkpoints
from tests.training.pretrain_command import command
from tests.training.pretrain_command import read_history

pytestmark = pytest.mark.both_backends  # The launcher loads no backend; one pass is enough.


@pytest.mark.slow
@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_the_command_ends_the_run_with_a_checkpoint_of_its_step(tmp_path, small_corpus, run_vocabulary, signal_number):
    launcher = shutil.which("keras-bert3")
    assert launcher, "the keras-bert3 command is not installed: pip install -e ."
    output = run_vocabulary(tmp_path / "run")
    arguments = command(output, small_corpus)[3:]
    environment = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "KERAS_BERT3_DEBUG")}
    process = subprocess.Popen([launcher, *arguments], cwd=REPO, env=environment, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 300
    while not os.path.isdir(output / "backup" / "checkpoint-1") and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert process.poll() is None, process.communicate()[1][-3000:]
    sent = time.monotonic()
    process.send_signal(signal_number)  # To the launcher alone, as Kubernetes signals a container's first process.
    _, stderr = process.communicate(timeout=120)
    took = time.monotonic() - sent
    assert process.returncode == 128 + signal_number, (process.returncode, stderr[-3000:])
    [latest], partial = checkpoints(output)
    assert partial == [] and latest != "checkpoint-1"  # A checkpoint of the step the signal found.
    with open(output / "backup" / latest / "training_metadata.json", encoding="utf-8") as f:
        import json

        step = json.load(f)["step"]
    name = signal.Signals(signal_number).name
    assert [line for line in stderr.splitlines() if line.startswith("keras-bert3 ")] == [
        f"keras-bert3 pretrain: Stopped by {name} at step {step}: wrote the checkpoint {output}/backup/{latest}. "
        "Run the same command to resume from it."
    ], stderr[-3000:]
    assert took < 60, took  # A step and a checkpoint of BERT-tiny, not the rest of the run.

    finished = subprocess.run([launcher, *arguments], cwd=REPO, env=environment, capture_output=True, text=True)
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert [int(row["step"]) for row in read_history(output)] == list(range(10, 61, 10))
