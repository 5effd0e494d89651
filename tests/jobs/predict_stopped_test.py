"""`keras-bert3 predict --input ... --output ...` stopped after its first
batch, by SIGTERM (a scheduler) or SIGKILL (a crash): nothing appears under
the output's name, and the same command, rerun, writes every row as an
undisturbed run does and removes what the killed one left."""

import json
import os
import shutil
import signal
import subprocess

import pytest

from keras_bert3.cli import main
from tests.named_moment import moment_environment
from tests.training.pretrain_command import REPO

BATCH_PREDICTED = ("keras_bert3.jobs.served_model:ServedModel.__call__", "after")  # Its rows not yet written.


@pytest.mark.slow
@pytest.mark.one_pass  # A file written under a temporary name, then renamed: the same on either backend.
def test_predict_stopped_midway_leaves_no_output_and_the_rerun_writes_every_row(task_files, tmp_path):
    from keras_bert3.models.bert_classifier import BertClassifier

    model = tmp_path / "model"
    BertClassifier.from_preset(str(task_files / "pretrained"), num_classes=3, sequence_length=32).save_to_preset(
        str(model)
    )
    rows = tmp_path / "rows.txt"
    with open(task_files / "validation.jsonl", encoding="utf-8") as f:
        rows.write_text("".join(json.loads(line)["sentence"] + "\n" for line in list(f)[:12]), encoding="utf-8")

    def predict(output):
        return ["predict", "--model", str(model), "--input", str(rows), "--output", str(output), "--batch-size", "4"]

    assert main([*predict(tmp_path / "undisturbed.jsonl"), "--verbose", "0"]) == 0
    launcher = shutil.which("keras-bert3")
    assert launcher, "the keras-bert3 command is not installed: pip install -e ."
    # The launcher in its default mode (either variable makes it run the command in its own process instead).
    environment = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "KERAS_BERT3_DEBUG")}
    for then, number in (("sigterm", signal.SIGTERM), ("kill", signal.SIGKILL)):
        output = tmp_path / f"{then}.jsonl"
        stopped = subprocess.run(
            [launcher, *predict(output), "--verbose", "0"],
            cwd=REPO,
            env=moment_environment(BATCH_PREDICTED, 2, then, environment),
            capture_output=True,
            text=True,
        )
        assert stopped.returncode == 128 + number, stopped.stderr[-3000:]
        left = [path.name for path in tmp_path.iterdir() if path.name.startswith(output.name)]
        if then == "sigterm":  # The command's own handler: it removes its partial file and says so in one line.
            assert left == [] and stopped.stderr.splitlines() == ["keras-bert3 predict: stopped by SIGTERM."]
        else:  # Nothing runs after SIGKILL: a partial file of a process that is gone, never the output.
            assert len(left) == 1 and left[0].endswith(".partial"), left
        assert main([*predict(output), "--verbose", "0"]) == 0
        assert output.read_text(encoding="utf-8") == (tmp_path / "undisturbed.jsonl").read_text(encoding="utf-8")
        assert [path.name for path in tmp_path.iterdir() if path.name.startswith(output.name)] == [output.name]
