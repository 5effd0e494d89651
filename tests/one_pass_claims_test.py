"""tests/conftest.py's sharing of one-pass tests between the passes of
tests/run_all.sh: with one claims folder, each one-pass test runs in exactly
one of two passes (the first to reach its file; a `one_pass` test in the
TensorFlow pass, whichever comes first), every other test in both."""

import os
import sys

import pytest

from tests import warm_commands

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TESTS = """
import pytest

@pytest.mark.backend_free
def test_one_pass_first():
    pass

@pytest.mark.one_pass
def test_one_pass_second():
    pass

def test_every_pass():
    pass
"""


@pytest.mark.slow
@pytest.mark.backend_free
def test_a_file_claimed_by_one_pass_is_skipped_by_the_other(tmp_path):
    (tmp_path / "shared_test.py").write_text(TESTS)
    claims = tmp_path / "claims"
    claims.mkdir()

    def run_pass(backend):
        environment = dict(os.environ, KERAS_BACKEND=backend, KERAS_BERT3_ONE_PASS_CLAIMS=str(claims))
        done = warm_commands.run(  # Forked from a process that has imported TensorFlow and Keras.
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "tests.conftest",
                "-p",
                "no:cacheprovider",
                "-rs",
                "-q",
                "--rootdir",
                str(tmp_path),
                str(tmp_path / "shared_test.py"),
            ],
            cwd=REPO,
            env=environment,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stdout[-3000:]
        return done.stdout

    first, second = run_pass("jax"), run_pass("tensorflow")
    assert "2 passed, 1 skipped" in first and "in the tensorflow pass" in first, first
    assert "2 passed, 1 skipped" in second and "in the jax pass this time" in second, second
    assert (claims / "shared_test.py").read_text() == "jax"
