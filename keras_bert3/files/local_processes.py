"""Whether a process of this host still runs: how a file a process left (a lock, a temporary folder) is told stale."""

import os


def running_here(pid) -> bool:
    """True while process `pid` of this host runs; False once it has ended or where `pid` is not a process number."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # Another user's process.
        return True
    return True
