"""Every Python file is as `ruff format` writes it (pyproject.toml's settings):
one layout for the whole tree, so that a change's diff shows only the change."""

import os
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.one_pass  # The files are the same on either backend.

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_tree_is_formatted():
    ruff = shutil.which("ruff") or os.path.join(os.path.dirname(sys.executable), "ruff")
    if not os.path.exists(ruff):
        pytest.fail("ruff is not installed: pip install -e '.[test]'")
    checked = subprocess.run([ruff, "format", "--check", "."], cwd=REPO, capture_output=True, text=True)
    assert checked.returncode == 0, f"run `ruff format .`:\n{checked.stdout}{checked.stderr}"
