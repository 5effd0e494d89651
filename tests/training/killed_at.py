"""Runs the `keras-bert3` command line in this process and kills the process
with SIGKILL at one chosen moment (or sends it SIGTERM, as a scheduler
preempting it would), to test that a run resumes from anywhere.

    python -m tests.training.killed_at MOMENT N pretrain ARGS...

MOMENT (N counts from the process's start):
    batch_end       after the Nth training batch: between two checkpoints
    history_row     at the Nth checkpoint write's start: the epoch's row is
                    already in history.csv, its checkpoint not begun
    weights_write   after h5py's Nth array write: inside a checkpoint's weights file
    before_commit   the Nth checkpoint complete under its temporary name, not renamed
    after_commit    the Nth checkpoint renamed, the one before it not yet removed
    sigterm         SIGTERM after the Nth training batch: the run writes a
                    checkpoint of that step and exits (128 + 15)

The moments are set by wrapping the functions that mark them; what runs, and
what is on disk when the process dies, is the command's own.
"""

import os
import signal
import sys


def die_at(owner, name: str, count: int, *, after: bool, signal_number: int = signal.SIGKILL) -> None:
    """Wraps `owner.name` to send this process `signal_number` at its `count`th call, before it runs or after."""
    original = getattr(owner, name)
    calls = [0]

    def wrapper(*args, **kwargs):
        calls[0] += 1
        if not after and calls[0] == count:
            os.kill(os.getpid(), signal_number)
        result = original(*args, **kwargs)
        if after and calls[0] == count:
            os.kill(os.getpid(), signal_number)
        return result

    setattr(owner, name, wrapper)


def main() -> int:
    moment, count, command = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    import h5py

    from keras_bert3.cli import main as cli_main
    from keras_bert3.training import resumable_backup
    from keras_bert3.training.stop_on_nan import StopOnNaN

    targets = {
        "batch_end": (StopOnNaN, "on_train_batch_end", True),
        "history_row": (resumable_backup, "write_checkpoint", False),
        "weights_write": (h5py.Group, "create_dataset", True),
        "before_commit": (resumable_backup, "commit_checkpoint", False),
        "after_commit": (resumable_backup, "remove_older_checkpoints", False),
        "sigterm": (StopOnNaN, "on_train_batch_end", True),
    }
    owner, name, after = targets[moment]
    die_at(owner, name, count, after=after, signal_number=signal.SIGTERM if moment == "sigterm" else signal.SIGKILL)
    return cli_main(command)


if __name__ == "__main__":
    sys.exit(main())
