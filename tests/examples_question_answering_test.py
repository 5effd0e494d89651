"""examples/answer_questions.py runs as its docstring says (the quick run, on
a tiny preset with MiniLM's vocabulary): fine-tunes on docstring questions,
writes a preset and an export that answers a raw passage as `predict` does.
(Question answering on the real MiniLM checkpoint is tested against Hugging
Face in tests/models/bert_question_answerer_test.py.)"""

import os
import re
import sys

import pytest

from tests import warm_commands
from tests.tiny_preset import write_tiny_preset

# The script runs on JAX (the examples share the backends between them; the library code they
# call is tested on both): one pass runs it.
pytestmark = pytest.mark.both_backends
BACKEND = dict(os.environ, KERAS_BACKEND="jax")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow
def test_answer_questions_example_exports_what_it_predicts(tmp_path, minilm_dir):
    preset = write_tiny_preset(str(tmp_path / "tiny"), minilm_dir)
    command = [
        sys.executable,
        "examples/answer_questions.py",
        "--preset",
        preset,
        "--train-size",
        "64",
        "--test-size",
        "32",
        "--sequence-length",
        "64",
        "--epochs",
        "1",
        "--output",
        str(tmp_path),
    ]
    result = warm_commands.run(command, cwd=REPO, env=BACKEND, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert re.search(r"exact match [\d.]+ -> [\d.]+, F1 [\d.]+ -> [\d.]+", result.stdout)
    assert "export answer == predict: True" in result.stdout
    difference = float(re.search(r"\|score - predict\| = ([\d.e+-]+)", result.stdout).group(1))
    assert difference < 1e-5
    assert os.path.isfile(tmp_path / "preset" / "task_head.weights.h5")
    assert os.path.isfile(tmp_path / "export" / "saved_model.pb")
