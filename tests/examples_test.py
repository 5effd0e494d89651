"""The scripts in examples/ run as their docstrings say (tiny runs)."""

import os
import re
import sys

import pytest

from tests import warm_commands

# The script runs on JAX (the examples share the backends between them; the library code they
# call is tested on both): one pass runs it.
pytestmark = pytest.mark.both_backends
BACKEND = dict(os.environ, KERAS_BACKEND="jax")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow
def test_pretrain_example_learns_and_saves_a_preset(tmp_path, run_vocabulary):
    vocabulary = os.path.join(run_vocabulary(tmp_path / "given"), "vocabulary.txt")  # Learning one is tested elsewhere.
    result = warm_commands.run(
        [
            sys.executable,
            "examples/pretrain.py",
            "--steps",
            "20",
            "--vocabulary",
            vocabulary,
            "--sequence-length",
            "64",
            "--output",
            str(tmp_path),
        ],
        cwd=REPO,
        env=BACKEND,
        capture_output=True,
        text=True,
        check=True,
    )
    before, after = map(float, re.search(r"mlm_loss\s+([\d.]+) -> ([\d.]+)", result.stdout).groups())
    assert after < before - 0.3
    assert os.path.isfile(tmp_path / "preset" / "model.weights.h5")
    assert os.path.isfile(tmp_path / "preset" / "vocabulary.txt")
