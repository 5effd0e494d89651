"""A real disk of a few megabytes (a tmpfs mount), for tests of writes that
find the disk full: the kernel refuses the write with ENOSPC, as a full
disk does."""

import contextlib
import subprocess

import pytest


@contextlib.contextmanager
def small_disk(path, megabytes: float):
    """Mounts a tmpfs of `megabytes` at `path` (created) for the block.
    Needs root (CI's machines run the suite as root); fails, saying so, elsewhere."""
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={int(megabytes * 1024)}k", "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.fail(
            f"a full-disk test needs a small disk: `mount -t tmpfs` failed ({mounted.stderr.strip()}); run as root"
        )
    try:
        yield path
    finally:
        subprocess.run(["umount", "--lazy", str(path)], check=True)
