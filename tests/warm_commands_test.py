"""A process forked from a warm one (tests/warm_commands.py) is, to the test
that starts it, the process `subprocess` starts: the same argv, folder,
environment, stdin, stdout and stderr, exit codes and deaths by signal, a
pid of its own that signals reach. `subprocess` itself is the oracle."""

import os
import signal
import subprocess
import sys

import pytest

from tests import warm_commands
from tests.named_moment import SHARD_RENAME
from tests.named_moment import moment_environment
from tests.named_moment import wait_for_the_moment

pytestmark = [
    pytest.mark.backend_free,  # Processes and files; no model runs.
    pytest.mark.skipif(
        not warm_commands.forking(),
        reason="commands are not forked here (KERAS_BERT3_WARM_COMMANDS=0, or --coverage, which measures each "
        "process from its start)",
    ),
]

SHOW = """
import json, os, sys
print(json.dumps({
    "argv": sys.argv, "folder": os.getcwd(), "path0": sys.path[0], "name": __name__,
    "test": os.environ.get("PYTEST_CURRENT_TEST"), "stdin": sys.stdin.read(),
}))
print("on stderr", file=sys.stderr)
sys.exit(int(sys.argv[1]))
"""


def new_and_forked(args, **kwargs):
    """`args` run by `subprocess.run`, then by `warm_commands.run`, which must fork it."""
    before = warm_commands.forked_commands()
    forked = warm_commands.run(args, **kwargs)
    assert warm_commands.forked_commands() == before + 1, "not forked"
    return subprocess.run(args, **kwargs), forked


@pytest.mark.parametrize("form", ["-c", "script", "-m"])
def test_a_forked_process_sees_what_a_new_one_sees(tmp_path, form):
    """The variable that differs from the warm process's (pytest's current
    test) is the test's; `-m` finds a module of the folder it runs in."""
    (tmp_path / "show.py").write_text(SHOW)
    first = {"-c": ["-c", SHOW], "script": [str(tmp_path / "show.py")], "-m": ["-m", "show"]}[form]
    new, forked = new_and_forked(
        [sys.executable, *first, "3", "an argument"], cwd=tmp_path, input="the input", capture_output=True, text=True
    )
    assert (forked.returncode, forked.stdout, forked.stderr) == (new.returncode, new.stdout, new.stderr)
    assert new.returncode == 3 and new.stderr == "on stderr\n"
    assert '"stdin": "the input"' in new.stdout and os.environ["PYTEST_CURRENT_TEST"] in new.stdout


def test_an_uncaught_exception_and_a_kill_end_it_as_they_end_a_new_process():
    new, forked = new_and_forked([sys.executable, "-c", "raise ValueError('stop')"], capture_output=True, text=True)
    assert forked.returncode == new.returncode == 1
    assert forked.stderr.splitlines()[-1] == new.stderr.splitlines()[-1] == "ValueError: stop"
    new, forked = new_and_forked([sys.executable, "-c", "raise KeyboardInterrupt"], capture_output=True, text=True)
    assert forked.returncode == new.returncode == -signal.SIGINT
    assert forked.stderr.splitlines()[-1] == new.stderr.splitlines()[-1] == "KeyboardInterrupt"
    killed = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"]
    new, forked = new_and_forked(killed)
    assert forked.returncode == new.returncode == -signal.SIGKILL


ENDING = """
import atexit, sys, threading
def late():
    for _ in range(10**6):
        pass
    print("thread", flush=True)
threading.Thread(target=late).start()  # Not a daemon: Python waits for it.
atexit.register(print, "atexit")
print("main")
sys.exit(sys.argv[1] if not sys.argv[1].isdigit() else int(sys.argv[1]))
"""


@pytest.mark.parametrize("code", ["0", "3", "300", "a message"])
def test_it_ends_as_python_ends_a_program(code):
    """`sys.exit`'s status (a message: printed, status 1), the other
    threads joined, then the atexit functions, the output flushed."""
    new, forked = new_and_forked([sys.executable, "-c", ENDING, code], capture_output=True, text=True)
    assert (forked.returncode, forked.stdout, forked.stderr) == (new.returncode, new.stdout, new.stderr)
    assert new.stdout == "main\nthread\natexit\n"


def test_the_teardown_of_its_modules_is_left_out_unless_asked_for():
    """A forked process skips what the interpreter's teardown would do, as
    finalizing what is still alive at the end; `teardown=True` keeps it."""
    script = [sys.executable, "-c", "class A:\n def __del__(self): print('torn down')\na = A()"]
    assert subprocess.run(script, capture_output=True, text=True, check=False).stdout == "torn down\n"
    assert warm_commands.run(script, capture_output=True, text=True).stdout == ""
    assert warm_commands.run(script, capture_output=True, text=True, teardown=True).stdout == "torn down\n"


def test_its_pid_is_its_own_and_signals_reach_it():
    """A process that waits at a named moment (the first call of
    `tabnanny.check`, a module the warm process has not imported) gets
    SIGTERM at its own pid, as the tests of commands send it."""
    before = warm_commands.forked_commands()
    process = warm_commands.Popen(
        [sys.executable, "-c", "import os, tabnanny; print(os.getpid(), flush=True); tabnanny.check(os.devnull)"],
        env=moment_environment(("tabnanny:check", "before"), 1, "wait"),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert warm_commands.forked_commands() == before + 1, "not forked"
    assert int(process.stdout.readline()) == process.pid != os.getpid()
    wait_for_the_moment(process)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == -signal.SIGTERM
    process.stdout.close()


def test_a_moment_in_a_module_the_warm_process_imported_starts_a_new_interpreter(tmp_path):
    """`tensorflow.python.lib.io.file_io:rename_v2` is bound by name in
    `tf.io.gfile` as TensorFlow is imported: only a new interpreter wraps it in time."""
    source, target = tmp_path / "a", tmp_path / "b"
    source.write_text("x")
    script = f"import tensorflow as tf; tf.io.gfile.rename({str(source)!r}, {str(target)!r})"
    before = warm_commands.forked_commands()
    done = warm_commands.run([sys.executable, "-c", script], env=moment_environment(SHARD_RENAME, 1, "kill"))
    assert done.returncode == -signal.SIGKILL and target.exists()
    assert warm_commands.forked_commands() == before
