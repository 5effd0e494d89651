"""The `keras-bert3` command keeps TensorFlow's, XLA's and Abseil's C++ log
lines out of the terminal, and passes on everything else with the exit code;
`--debug` and a user's `TF_CPP_MIN_LOG_LEVEL` show them."""

import os
import re
import shutil
import subprocess

import pytest

from keras_bert3_command import BEAM_START_UP_LINE
from keras_bert3_command import NATIVE_LOG_LINE

pytestmark = pytest.mark.both_backends  # The command's own process loads no backend: one pass is enough.

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NATIVE = re.compile(r"^([IWEF]\d{4} \d\d:\d\d:\d+|WARNING: All log messages before absl)", re.MULTILINE)


def run(command, **environment):
    env = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "KERAS_BERT3_DEBUG")}
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, env=dict(env, **environment))


@pytest.fixture(scope="module")
def command():
    found = shutil.which("keras-bert3")
    if found is None:  # tests/run_all.sh installs the package, and with it the command.
        pytest.fail("the keras-bert3 command is not installed: pip install -e .")
    return found


@pytest.mark.slow
def test_the_command_leaves_native_log_lines_out_and_keeps_the_rest(tmp_path, command):
    # A command that loads TensorFlow (and prints its start-up lines), then fails on the user's input.
    arguments = ["predict", "--model", str(tmp_path), "Some text."]
    # Where the user set TF_CPP_MIN_LOG_LEVEL, the command runs unfiltered: the lines there are to leave out.
    raw = run([command, *arguments], TF_CPP_MIN_LOG_LEVEL="0")
    assert NATIVE.search(raw.stderr), "TensorFlow printed no native log line here: nothing to leave out"
    quiet = run([command, *arguments])
    assert quiet.returncode == raw.returncode == 2
    assert not NATIVE.search(quiet.stderr), quiet.stderr
    # What the command says itself passes through, whole and alone.
    ours = [line for line in raw.stderr.splitlines() if line.startswith("keras-bert3 predict: ")]
    assert quiet.stderr.splitlines() == ours and len(ours) == 1 and "is not a fine-tuned preset" in ours[0]
    # Asked for with --debug, the lines show too.
    assert NATIVE.search(run([command, "--debug", *arguments]).stderr)


def test_only_native_log_lines_and_their_continuations_match():
    assert NATIVE_LOG_LINE.match(
        b"I0000 00:00:1795685863.773190   18040 port.cc:153] oneDNN custom operations are on.\n"
    )
    assert NATIVE_LOG_LINE.match(b"E0000 00:00:1795685311.805998   10834 cuda_platform.cc:52] failed call to cuInit\n")
    assert NATIVE_LOG_LINE.match(b"W0000 00:00:1795684420.014719    5481 local_rendezvous.cc:412] Local rendezvous\n")
    for ours in (
        b"keras-bert3 pretrain: --batch-size 0 must be at least 1.\n",
        b"Traceback (most recent call last):\n",
        b"Pretraining data so far: 3 empty files (skipped)\n",
        b"I0000 is a fine name for a file\n",
    ):
        assert not NATIVE_LOG_LINE.match(ours) and not BEAM_START_UP_LINE.match(ours)
    # Beam's worker processes, before their harness log level applies (copied from a `prepare-data --beam` run).
    assert BEAM_START_UP_LINE.match(b"INFO:__main__:Logging handler created.\n")
    assert BEAM_START_UP_LINE.match(
        b"WARNING:root:apitools not found, and bigquery client libraries are not available "
        b"despite the import not raising an ImportError.\n"
    )
    assert not BEAM_START_UP_LINE.match(b"ERROR:apache_beam.runners.worker.sdk_worker:Error processing instruction\n")
