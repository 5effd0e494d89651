"""`keras-bert3 predict --input ... --output ...` stopped midway, by SIGKILL
(a crash, a lost host) or SIGTERM (a scheduler's preemption), at named
moments: nothing appears under the output's name, the finished rows stay in
the partial file, and the same command, rerun, goes on from the next row and
says so; at the end the output is an undisturbed run's, byte for byte. A second
copy beside a running one, and a rerun with other settings, are refused;
`--overwrite` starts over."""

import json
import logging
import os
import shutil
import signal
import subprocess
import sys

import pytest

from keras_bert3.cli import main
from tests.jobs.bad_input_test import refused
from tests.named_moment import moment_environment
from tests.training.pretrain_command import REPO
from tests.warm_commands import started_and_waiting

# The moments: a batch's rows recorded; a batch's rows written, not yet recorded; a batch predicted, not yet written.
RECORDED = ("keras_bert3.jobs.prediction_progress:record_progress", "after")
WRITTEN = ("keras_bert3.jobs.prediction_progress:record_progress", "before")
PREDICTED = ("keras_bert3.jobs.served_model:ServedModel.__call__", "after")


@pytest.mark.slow
@pytest.mark.one_pass  # Files written, recorded and renamed: the same on either backend.
def test_predict_stopped_midway_goes_on_from_the_next_row_to_the_undisturbed_output(
    task_files, tmp_path, capsys, caplog
):
    from keras_bert3.models.bert_classifier import BertClassifier

    model = tmp_path / "model"
    BertClassifier.from_preset(str(task_files / "pretrained"), num_classes=3, sequence_length=32).save_to_preset(
        str(model)
    )
    rows = tmp_path / "rows.csv"
    with open(task_files / "validation.jsonl", encoding="utf-8") as f:
        texts = [json.loads(line)["sentence"] for line in f][:22]
    rows.write_text("id,text\n" + "".join(f'{i},"{t.replace(chr(34), chr(39))}"\n' for i, t in enumerate(texts)))

    def predict(output, *extra):
        return [
            "predict", "--model", str(model), "--input", str(rows), "--text-column", "text", "--output", str(output),
            "--batch-size", "4", "--verbose", "0", *extra,
        ]  # fmt: skip

    assert main(predict(tmp_path / "undisturbed.csv")) == 0
    undisturbed = (tmp_path / "undisturbed.csv").read_bytes()
    launcher = shutil.which("keras-bert3")
    assert launcher, "the keras-bert3 command is not installed: pip install -e ."
    # The launcher in its default mode (either variable makes it run the command in its own process instead).
    environment = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "KERAS_BERT3_DEBUG")}
    output = tmp_path / "out.csv"
    # (moment, its call in the run, then, the rows kept after it: 4 a batch, from where the run began)
    stops = [(RECORDED, 2, "kill", 8), (WRITTEN, 1, "kill", 8), (PREDICTED, 2, "sigterm", 12)]
    for moment, call, then, kept in stops:
        stopped = subprocess.run(
            [launcher, *predict(output)],
            cwd=REPO,
            env=moment_environment(moment, call, then, environment),
            capture_output=True,
            text=True,
        )
        number = signal.SIGKILL if then == "kill" else signal.SIGTERM
        assert stopped.returncode == 128 + number, stopped.stderr[-3000:]
        if then == "sigterm":  # The command's own handler: one line on stderr, what it kept on stdout.
            assert stopped.stderr.splitlines() == ["keras-bert3 predict: stopped by SIGTERM."], stopped.stderr
            assert (
                f"{kept} rows are kept in {output}.partial: the same command goes on from the next." in stopped.stdout
            )
        assert not output.exists()
        partial = (tmp_path / "out.csv.partial").read_bytes()
        assert undisturbed.startswith(partial[: len(partial)])  # Never a row of its own, at worst one more batch.
        assert json.loads((tmp_path / "out.csv.partial.json").read_text())["rows"] == kept
    # A second copy while a run goes on from there (waiting after its first batch's record) is refused.
    going_on = started_and_waiting([sys.executable, "-m", "keras_bert3", *predict(output)], RECORDED, 1, cwd=REPO)
    line = refused(capsys, *predict(output))
    assert line.startswith(f"keras-bert3 predict: Another predict is writing --output {output} (it holds "), line
    going_on.send_signal(signal.SIGTERM)
    going_on.communicate(timeout=300)
    assert going_on.returncode == 128 + signal.SIGTERM
    line = refused(capsys, *predict(output)[:-2], "--batch-size", "5")
    said = f"keras-bert3 predict: {output}.partial holds 16 rows predicted with --batch-size 4 (this run: 5): run the"
    assert line.startswith(said), line
    caplog.set_level(logging.INFO, logger="keras_bert3")
    assert main(predict(output)) == 0
    assert ours(caplog) == [f"Going on from row 17: 16 rows are kept in {output}.partial."]
    assert output.read_bytes() == undisturbed
    assert sorted(path.name for path in tmp_path.iterdir() if path.name.startswith("out")) == ["out.csv"]
    # Stopped again, then started over: --overwrite.
    stopped = subprocess.run(
        [launcher, *predict(tmp_path / "again.csv")], cwd=REPO, env=moment_environment(RECORDED, 1, "kill", environment)
    )
    assert stopped.returncode == 128 + signal.SIGKILL
    caplog.clear()
    assert main(predict(tmp_path / "again.csv", "--overwrite")) == 0
    assert ours(caplog) == [] and (tmp_path / "again.csv").read_bytes() == undisturbed


def ours(caplog) -> list[str]:
    """The messages keras_bert3 logged."""
    return [record.getMessage() for record in caplog.records if record.name.startswith("keras_bert3")]
