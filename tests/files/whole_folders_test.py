"""A folder written with `written_whole` appears whole or not at all: it
replaces what was there only once complete, a failed write leaves the old
folder as it was and no temporary folder, and a killed writer's temporary
folder is removed by the next one."""

import os
import re
import socket
import subprocess

import pytest

from keras_bert3.files.whole_folders import written_whole
from keras_bert3.files.write_failed import WriteFailed

pytestmark = pytest.mark.backend_free  # Files and Python only: no Keras backend reaches them.


def test_a_complete_folder_replaces_the_old_one(tmp_path):
    final = tmp_path / "serving" / "1"
    final.mkdir(parents=True)
    (final / "saved_model.pb").write_text("old")
    with written_whole(str(final), "the SavedModel", marker="saved_model.pb") as folder:
        assert (
            not (final / "new.txt").exists() and (final / "saved_model.pb").exists()
        )  # Readers see the old one meanwhile.
        with open(os.path.join(folder, "new.txt"), "w") as f:
            f.write("new")
    assert sorted(os.listdir(final)) == ["new.txt"]
    assert os.listdir(tmp_path / "serving") == ["1"]


def test_a_folder_of_other_files_is_never_replaced(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    for final, kind in [(tmp_path, "a folder of other files (no task.json)"), (tmp_path / "notes.txt", "a file")]:
        with pytest.raises(
            ValueError, match=rf"{final} is {re.escape(kind)}, which writing the fine-tuned preset there would replace"
        ):
            with written_whole(str(final), "the fine-tuned preset", marker="task.json"):
                pytest.fail("the block must not run")
    assert os.listdir(tmp_path) == ["notes.txt"]


def test_a_failed_write_keeps_the_old_folder_and_leaves_nothing(tmp_path):
    final = tmp_path / "preset"
    final.mkdir()
    (final / "config.json").write_text("old")
    with pytest.raises(
        WriteFailed,
        match=rf"Cannot write the preset {final}: No space left on device\. What was at {final} before is untouched\.",
    ):
        with written_whole(str(final), "the preset", marker="config.json") as folder:
            with open(os.path.join(folder, "half.txt"), "w") as f:
                f.write("half")
            raise OSError(28, "No space left on device")
    assert os.listdir(tmp_path) == ["preset"] and os.listdir(final) == ["config.json"]
    with pytest.raises(KeyError):  # Not a write failure: passed on as it is, the temporary folder removed.
        with written_whole(str(final), "the preset", marker="config.json"):
            raise KeyError("a bug")
    assert os.listdir(tmp_path) == ["preset"]


def test_a_killed_writers_temporary_folder_is_removed_by_the_next(tmp_path):
    ended = subprocess.Popen(["true"])
    ended.wait()
    left = tmp_path / f"preset.{socket.gethostname()}.{ended.pid}.partial"
    left.mkdir()
    (left / "model.weights.h5").write_bytes(b"\x89HDF half")
    with written_whole(str(tmp_path / "preset"), "the preset", marker="config.json"):
        pass
    assert os.listdir(tmp_path) == ["preset"]
