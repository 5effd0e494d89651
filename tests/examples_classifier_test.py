"""examples/finetune_classifier.py runs as its docstring says on single
sentences (its `--pairs` mode differs only in the data it builds; pair
exports are tested in tests/models/text_classifier_export_test.py), with a
tiny preset with MiniLM's vocabulary and a few dozen
real sentences: the export it writes answers as `predict` does, and
examples/serve_saved_model.py serves it."""

import os
import re
import sys

import pytest

from tests import warm_commands
from tests.tiny_preset import write_tiny_preset

# The script runs on TensorFlow (the examples share the backends between them; the library code they
# call is tested on both): one pass runs it.
pytestmark = pytest.mark.both_backends
BACKEND = dict(os.environ, KERAS_BACKEND="tensorflow")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow
def test_finetune_classifier_example_exports_what_it_predicts(tmp_path, minilm_dir):
    preset = write_tiny_preset(str(tmp_path / "tiny"), minilm_dir)
    command = [
        sys.executable,
        "examples/finetune_classifier.py",
        "--preset",
        preset,
        "--train-size",
        "64",
        "--test-size",
        "32",
        "--epochs",
        "1",
        "--sequence-length",
        "64",
        "--output",
        str(tmp_path / "run"),
    ]
    result = warm_commands.run(command, cwd=REPO, env=BACKEND, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert re.search(r"test accuracy [\d.]+ -> [\d.]+", result.stdout)
    difference = float(re.search(r"max \|probabilities - predict\| = ([\d.e+-]+)", result.stdout).group(1))
    assert difference < 1e-5
    assert os.path.isfile(tmp_path / "run" / "preset" / "task_head.weights.h5")
    # examples/serve_saved_model.py serves that export with TensorFlow and tf-text only.
    texts = ["Round the decimal number to two places.", ""]
    served = warm_commands.run(
        [
            sys.executable,
            "examples/serve_saved_model.py",
            "--model",
            str(tmp_path / "run" / "serving" / "1"),
            "--repeats",
            "2",
            *texts,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert served.returncode == 0, served.stderr[-3000:]
    answers = [line.split("\t") for line in served.stdout.splitlines() if line.count("\t") == 2]
    assert [text for _, _, text in answers] == texts
    assert re.search(r"latency [\d.]+ ms for one string; \d+ strings/s", served.stdout)
    assert os.path.isfile(tmp_path / "run" / "serving" / "request.json")
