"""The README's main job (`keras-bert3 pipeline`), shortened, prints what a user should see: each stage and
its result, no native log lines, and no Python warning, with every warning shown (`PYTHONWARNINGS=default`).

One warning is left out: numpy 2's DeprecationWarning that TensorFlow 2.21's variables do not take `copy` in
`__array__`, raised wherever a variable becomes a numpy array (Keras's own weight saving included). It is
upstream's, and hidden by Python's default filters."""

import os
import re
import shutil
import subprocess
import sys

import pytest

from keras_bert3_demo.demo_commands import PIPELINE_EXAMPLES
from tests.command_test import NATIVE

pytestmark = [pytest.mark.one_pass, pytest.mark.slow]  # The job as a new user runs it: Keras's default backend.

TENSORFLOW_ARRAY_COPY = "ignore:__array__ implementation doesn't accept a copy keyword:DeprecationWarning"
PYTHON_WARNING = re.compile(r"^.*\b\w*Warning: .*$", re.MULTILINE)  # How `warnings` prints one.


def test_the_main_job_prints_no_warning_and_no_native_log_line(tmp_path):
    command = shutil.which("keras-bert3")
    assert command, "the keras-bert3 command is not installed: pip install -e ."
    environment = {k: v for k, v in os.environ.items() if k not in ("KERAS_BACKEND", "TF_CPP_MIN_LOG_LEVEL")}
    environment["PYTHONWARNINGS"] = f"default,{TENSORFLOW_ARRAY_COPY}"  # Later entries win.
    # The README's command with fewer steps: every stage, and every code path, of the full job (under a minute).
    job = [command, "pipeline", "--output", str(tmp_path / "main"), "--pretrain-steps", "2", "--finetune-epochs", "1"]
    completed = subprocess.run(job, capture_output=True, text=True, env=environment, cwd=tmp_path)
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output[-5000:]
    assert all(f"] {stage}: " in output for stage in ("pretrain", "topics", "finetune", "export", "predict")), output
    predictions = [line.split("\t") for line in completed.stdout.splitlines() if line.count("\t") == 2]
    assert [text for _, _, text in predictions] == PIPELINE_EXAMPLES
    assert all(0 < float(probability) <= 1 for _, probability, _ in predictions)
    assert not NATIVE.search(output), output
    assert not PYTHON_WARNING.findall(output), output


def test_the_pattern_sees_warnings_and_the_filter_leaves_out_only_tensorflows_array_copy():
    # Numpy's own message (numpy/_core/src/multiarray/ctors.c), raised for an object like TensorFlow's variables.
    script = (
        "import warnings, numpy\n"
        "class Variable:\n"
        "    def __array__(self, dtype=None):\n"
        "        return numpy.zeros(1)\n"
        "numpy.array(Variable())\n"
        "warnings.warn('a size-1 axis')\n"
    )

    def warnings_printed(setting):
        environment = dict(os.environ, PYTHONWARNINGS=setting)
        completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment)
        assert completed.returncode == 0, completed.stderr[-3000:]
        return [line.split(": ")[1] for line in PYTHON_WARNING.findall(completed.stderr)]

    assert warnings_printed("default") == ["DeprecationWarning", "UserWarning"]
    assert warnings_printed(f"default,{TENSORFLOW_ARRAY_COPY}") == ["UserWarning"]
