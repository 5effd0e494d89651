"""The command's process starts without the libraries Keras and TensorFlow
import only because they are installed (keras_bert3/command_start.py); a
program that imports keras_bert3 gets Keras as usual."""

import importlib.util
import os
import subprocess
import sys

import keras
import pytest

from keras_bert3.command_start import UNUSED_BY_COMMANDS

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def imports_with_what_they_loaded(stderr: str) -> dict[str, bool]:
    """Each module `python -X importtime` reports, and whether loading it
    loaded other modules: those come before it, one indent deeper. A library
    whose import failed loaded nothing."""
    rows = []
    for line in stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.split("|")[2]
            rows.append((len(name) - len(name.lstrip()), name.strip()))
    rows = rows[1:]  # The header.
    return {name: i > 0 and rows[i - 1][0] > depth for i, (depth, name) in enumerate(rows)}


@pytest.mark.slow
def test_the_command_leaves_out_what_it_does_not_use_and_a_library_user_gets_it(tmp_path):
    # A command that imports the whole command line, then fails on the user's input.
    completed = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "keras_bert3", "predict", "--model", str(tmp_path), "Text."],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 2, completed.stderr[-3000:]
    imported = imports_with_what_they_loaded(completed.stderr)
    assert imported["keras_bert3.cli"] and imported["tensorflow"]
    # IPython is no dependency of keras_bert3: where it is installed (a notebook's machine), it is left out too.
    installed = [name for name in UNUSED_BY_COMMANDS if importlib.util.find_spec(name) is not None]
    assert {"sklearn", "matplotlib"} <= set(installed)  # Dependencies of keras_bert3.
    left_out = installed + (["jax"] if keras.backend.backend() == "tensorflow" else [])
    for library in left_out:
        tried = {name: loaded for name, loaded in imported.items() if name.split(".")[0] == library}
        assert tried and not any(tried.values()), (library, tried)  # Tried by Keras or TensorFlow; nothing loaded.
    # This process imported keras_bert3 as a library: Keras found scikit-learn (a dependency of keras_bert3).
    from keras.src.wrappers import fixes

    assert fixes.sklearn is not None and "matplotlib.pyplot" in sys.modules
    assert all(name in sys.modules for name in installed)
