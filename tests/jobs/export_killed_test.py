"""`keras-bert3 export` killed (SIGKILL) when its SavedModel is written in
full but not yet renamed into place: nothing appears under the output's name
(TF Serving, watching the folder, never sees a half version), and the same
command, rerun, writes the export and removes what the killed one left."""

import os
import shutil
import signal
import subprocess

import numpy as np
import pytest

from keras_bert3.cli import main
from tests.named_moment import moment_environment
from tests.training.pretrain_command import REPO

FOLDER_RENAME = ("keras_bert3.files.whole_folders:_replace", "before")  # Written and flushed, not yet in place.


@pytest.mark.slow
@pytest.mark.one_pass  # Files and a rename: the same on either backend.
def test_an_export_killed_before_its_rename_leaves_no_version_and_the_rerun_serves(task_files, tmp_path):
    from keras_bert3.jobs.served_model import ServedModel
    from keras_bert3.models.bert_classifier import BertClassifier

    model = tmp_path / "model"
    classifier = BertClassifier.from_preset(str(task_files / "pretrained"), num_classes=3, sequence_length=32)
    classifier.save_to_preset(str(model))
    serving = tmp_path / "serving"
    command = ["export", "--model", str(model), "--output", str(serving / "1"), "--no-warmup"]
    launcher = shutil.which("keras-bert3")
    assert launcher, "the keras-bert3 command is not installed: pip install -e ."
    # The command as users run it: the launcher, in its default mode, starts the command's process and says
    # 128 + N when a signal ends it (with either variable, it runs the command in its own process instead).
    environment = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "KERAS_BERT3_DEBUG")}
    killed = subprocess.run(
        [launcher, *command],
        cwd=REPO,
        env=moment_environment(FOLDER_RENAME, 1, "kill", environment),
        capture_output=True,
        text=True,
    )
    assert killed.returncode == 128 + signal.SIGKILL, killed.stderr[-3000:]
    left = os.listdir(serving)
    assert len(left) == 1 and left[0].startswith("1.") and left[0].endswith(".partial"), left

    assert main(command) == 0
    assert os.listdir(serving) == ["1"]
    texts = ["Open a file and read its lines.", "Sort the list in place, then return None."]
    served, predicted = ServedModel(str(serving / "1"))({"text": texts}), ServedModel(str(model))({"text": texts})
    assert [row["label"] for row in served] == [row["label"] for row in predicted]
    np.testing.assert_allclose(
        [row["probability"] for row in served], [row["probability"] for row in predicted], atol=1e-5
    )
