"""One run per output folder: `<output>/run.lock`, held while a run lives."""

import contextlib
import datetime
import errno
import fcntl
import json
import os
import socket
import sys

from keras_bert3.files.local_processes import running_here

LOCK_FILE = "run.lock"


@contextlib.contextmanager
def run_lock(folder: str, *, flag: str = "--output"):
    """Holds `<folder>/run.lock` for the block, or refuses (`ValueError` naming the running one's host, pid and start)
    where another run holds it. An exclusive `flock` leaves no stale lock after a kill; without `flock` (some network
    and FUSE mounts) a lock of this host whose process is gone is taken over. The file stays when the run ends: removing
    it would let two runs lock two files."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, LOCK_FILE)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _lock(descriptor, path, flag)
        holder = {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "command": " ".join(sys.argv),
        }
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, (json.dumps(holder) + "\n").encode(), 0)
        yield path
    finally:
        os.close(descriptor)  # Releases the flock.


def _lock(descriptor: int, path: str, flag: str) -> None:
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        raise ValueError(_refusal(path, _holder(path), flag)) from None
    except OSError as error:
        if error.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
            raise
    holder = _holder(path)  # No flock here: the contents decide.
    if not holder or holder.get("pid") == os.getpid():
        return
    if holder.get("host") == socket.gethostname() and not running_here(holder.get("pid")):
        return  # Stale: its process is gone.
    raise ValueError(_refusal(path, holder, flag) + f" If that run is gone, remove {path}.")


def _holder(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            return json.loads(f.read() or "{}")
    except (OSError, ValueError):
        return {}


def _refusal(path: str, holder: dict, flag: str) -> str:
    who = f"pid {holder.get('pid', '?')} on {holder.get('host', '?')}, started {holder.get('started', '?')}"
    return (
        f"{os.path.dirname(path)} is in use by another run ({who}; {path}). Two runs on one folder would mix "
        f"their files: wait for it to end, or give this run another {flag}."
    )
