"""`keras-bert3 export` killed (SIGKILL) when its SavedModel is written in
full but not yet renamed into place: nothing appears under the output's name
(TF Serving, watching the folder, never sees a half version), and the same
command, rerun, writes the export and removes what the killed one left. Two
copies of the command on one output both finish: the last rename wins, and
the version is whole."""

import os
import shutil
import signal
import socket
import subprocess
import sys

import numpy as np
import pytest

from keras_bert3.cli import main
from tests.named_moment import FOLDER_RENAME
from tests.named_moment import moment_environment
from tests.warm_commands import started_and_waiting
from tests.training.pretrain_command import REPO


@pytest.mark.slow
@pytest.mark.one_pass  # Files and a rename: the same on either backend.
def test_an_export_killed_before_its_rename_leaves_no_version_and_two_copies_end_whole(task_files, tmp_path):
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

    # A second copy: one export waits with its folder written, not renamed, while another runs whole
    # (removing what the killed one left, not the live one's folder); then the first goes on and replaces it.
    first = started_and_waiting([sys.executable, "-m", "keras_bert3", *command], FOLDER_RENAME, 1, cwd=REPO)
    assert main(command) == 0
    assert sorted(os.listdir(serving)) == ["1", f"1.{socket.gethostname()}.{first.pid}.partial"]
    first.send_signal(signal.SIGUSR1)  # Go on.
    _, stderr = first.communicate(timeout=120)
    assert first.returncode == 0, stderr[-3000:]
    assert os.listdir(serving) == ["1"]
    texts = ["Open a file and read its lines.", "Sort the list in place, then return None."]
    served, predicted = ServedModel(str(serving / "1"))({"text": texts}), ServedModel(str(model))({"text": texts})
    assert [row["label"] for row in served] == [row["label"] for row in predicted]
    np.testing.assert_allclose(
        [row["probability"] for row in served], [row["probability"] for row in predicted], atol=1e-5
    )
