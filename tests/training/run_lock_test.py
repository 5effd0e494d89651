"""One run per output folder: a second `keras-bert3 pretrain` on a folder a
live run holds is refused in one line naming that run, which finishes with
its history whole; a lock left by a run that ended does not hold."""

import errno
import fcntl
import json
import os
import signal
import socket
import subprocess

import pytest

from keras_bert3.training.run_lock import LOCK_FILE
from keras_bert3.training.run_lock import run_lock
from tests.named_moment import BATCH_END
from tests.warm_commands import started_and_waiting
from tests.training.pretrain_command import REPO
from tests.training.pretrain_command import command
from tests.training.pretrain_command import read_history
from tests.training.pretrain_command import refusal
from tests.training.pretrain_command import with_flags


def holder(output):
    try:
        with open(os.path.join(output, LOCK_FILE), encoding="utf-8") as f:
            return json.loads(f.read() or "{}")
    except (OSError, ValueError):
        return {}


@pytest.mark.slow
@pytest.mark.one_pass
def test_a_second_run_on_a_folder_in_use_is_refused_and_the_first_finishes_whole(
    tmp_path, small_corpus, run_vocabulary, capsys
):
    from keras_bert3.cli import main

    output = run_vocabulary(tmp_path / "run")
    args = with_flags(command(output, small_corpus), steps=30)
    # The first run waits after its first step (holding the folder) until it is told to go on.
    stderr = open(tmp_path / "stderr.txt", "w+", encoding="utf-8")
    first = started_and_waiting(args, BATCH_END, 1, cwd=REPO, stderr=stderr)
    code, errors = refusal(main, args[3:], capsys)
    assert code == 2 and len(errors) == 1, errors
    assert errors[0].startswith(
        f"keras-bert3 pretrain: {output} is in use by another run (pid {first.pid} on {socket.gethostname()}, started "
    ), errors
    assert "wait for it to end, or give this run another --output" in errors[0]
    first.send_signal(signal.SIGUSR1)  # Go on.
    first.communicate(timeout=300)
    stderr.seek(0)
    assert first.returncode == 0, stderr.read()[-3000:]
    assert [row["step"] for row in read_history(output)] == ["10", "20", "30"]  # One header, each row once.

    # The first run has ended: its lock, still naming it, holds nothing; a longer run goes on from its checkpoint.
    assert holder(output)["pid"] == first.pid
    assert main(with_flags(args[3:], steps=40)) == 0
    assert [row["step"] for row in read_history(output)] == ["10", "20", "30", "40"]


@pytest.mark.backend_free
def test_without_flock_the_lock_file_decides(tmp_path, monkeypatch):
    """On a file system without `flock` (some network and FUSE mounts, played
    here by a `flock` that fails as theirs does), the holder's host and pid
    decide: a lock of this host's ended process is stale, one of a running
    process or of another host is refused."""

    def no_flock(descriptor, operation):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_flock)
    folder = tmp_path / "run"
    folder.mkdir()
    ended = subprocess.Popen(["true"])
    ended.wait()  # Its pid is free now.
    for pid, host, refused in [
        (ended.pid, socket.gethostname(), False),
        (os.getppid(), socket.gethostname(), True),
        (ended.pid, "another-host", True),
    ]:
        (folder / LOCK_FILE).write_text(json.dumps({"host": host, "pid": pid, "started": "then"}))
        if refused:
            with pytest.raises(
                ValueError,
                match=rf"in use by another run \(pid {pid} on {host}, started then; .*If that run is gone, remove",
            ):
                with run_lock(str(folder)):
                    pass
        else:
            with run_lock(str(folder)):
                assert holder(folder)["pid"] == os.getpid()
