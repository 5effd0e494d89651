"""A diverging run never writes a checkpoint of non-finite weights, names the
last checkpoint (or says there is none), and the same folder goes on from it
with a lower learning rate."""

import math
import os
import shutil

import h5py
import numpy as np
import pytest

from keras_bert3.training.resumable_backup import WEIGHTS_FILE
from keras_bert3.training.resumable_backup import checkpoint_step
from keras_bert3.training.resumable_backup import latest_checkpoint
from tests.training.pretrain_command import command
from tests.training.pretrain_command import read_history
from tests.training.pretrain_command import refusal
from tests.training.pretrain_command import with_flags

# The stop is the same on either backend; the check of the weights is tested on both (resumable_backup_test.py).
pytestmark = pytest.mark.one_pass


def all_finite(checkpoint):
    arrays = []
    with h5py.File(os.path.join(checkpoint, WEIGHTS_FILE), "r") as f:
        f.visititems(lambda name, item: arrays.append(item[()]) if isinstance(item, h5py.Dataset) else None)
    return len(arrays) > 50 and all(np.isfinite(a).all() for a in arrays if a.dtype.kind == "f")


def divergence(main, args, capsys, output):
    """Runs `args`, which must diverge: the one line, and the last checkpoint (finite) it names."""
    code, errors = refusal(main, args, capsys)
    assert (
        code == 2 and len(errors) == 1 and errors[0].startswith("keras-bert3 pretrain: Training diverged at step ")
    ), errors
    last = latest_checkpoint(str(output / "backup"))
    if last is None:
        assert (
            "No checkpoint was written before it: lower the learning rate and run again (it starts over)." in errors[0]
        )
    elif "is blown up too" in errors[0]:  # Finite, but the loss its weights give is far over an untrained model's.
        assert all_finite(last)
        assert f"The last checkpoint, {last}, is blown up too (its weights give a loss of " in errors[0], errors
        assert f"remove it (rm -r {last}), then run again with a lower learning rate" in errors[0], errors
    else:
        assert all_finite(last)  # Weights and optimizer state.
        assert (
            f"The last checkpoint, {last} (step {checkpoint_step(last)}), holds finite weights: lower the learning "
            "rate and run again to resume from it"
        ) in errors[0], errors
    return last, errors[0]


@pytest.mark.slow
def test_a_run_that_diverges_goes_on_from_its_last_checkpoint_at_a_lower_rate(
    tmp_path, small_corpus, run_vocabulary, capsys
):
    """20 steps at 1e-3, then the same folder asked for 40 steps at a rate of
    a million: NaN within the next checkpoint's steps. The checkpoint of step
    20 is named, and the folder goes on from it at 1e-3."""
    from keras_bert3.cli import main

    output = run_vocabulary(tmp_path / "run")
    args = with_flags(command(output, small_corpus)[3:], steps=20)
    assert main(args) == 0
    last, said = divergence(main, with_flags(args, steps=40, learning_rate=1e6), capsys, output)
    assert "blown up" not in said  # Its weights gave a loss as before; the new rate blew the next steps up.
    assert last == str(output / "backup" / "checkpoint-2") and checkpoint_step(last) == 20
    assert main(with_flags(args, steps=40)) == 0
    rows = read_history(output)
    assert [int(row["step"]) for row in rows] == [10, 20, 30, 40]
    assert all(
        math.isfinite(float(row["loss"])) and float(row["loss"]) < 8 for row in rows
    )  # Trained on, not blown up.


@pytest.mark.slow
def test_a_checkpoint_every_step_at_a_rate_of_1000_keeps_only_finite_ones(
    tmp_path, small_corpus, run_vocabulary, capsys
):
    """The report of issue 52: a step's loss is finite while its update is
    not, and the checkpoint of that step held only NaN. The weights are now
    checked before each write."""
    from keras_bert3.cli import main

    output = run_vocabulary(tmp_path / "run")
    args = with_flags(command(output, small_corpus)[3:], learning_rate=1000, checkpoint_every=1)
    last, said = divergence(main, args, capsys, output)
    assert "is blown up too" in said
    # The same folder at a rate of 1e-4 resumes from that checkpoint, finite but blown up (the loss its
    # weights give is far over an untrained model's), and diverges again: the run names it to remove.
    lower = with_flags(args, learning_rate=1e-4)
    named, again = divergence(main, lower, capsys, output)
    assert named == last and "is blown up too" in again
    shutil.rmtree(last)  # As the line says: then the run starts over, and goes on.
    assert main(with_flags(lower, steps=12)) == 0
    rows = read_history(output)
    assert [int(row["step"]) for row in rows] == list(range(1, 13))
    assert all(math.isfinite(float(row["loss"])) and float(row["loss"]) < 9 for row in rows)
