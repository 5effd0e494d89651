"""Checkpoints that survive a kill at any instant, and the resume from them.

At each epoch's end `ResumableBackup` writes one checkpoint folder,
`<backup_dir>/checkpoint-<epochs done>`, holding everything a resumed `fit`
needs to go on as if never stopped:

- `model.weights.h5`: the model's weights and its optimizer's state;
- `random_state.npz`: the model's random state (dropout's seed generators,
  which `model.weights` leaves out), so a resumed run draws the dropout masks
  an uninterrupted one would;
- `training_metadata.json`: the epochs done and the optimizer's step.

The folder is written under a temporary name beside it, every file flushed to
disk, then renamed in one step (a rename within a folder is atomic), and only
then is the previous checkpoint removed. A process killed at any instant, in
the middle of a multi-gigabyte write included, leaves the new checkpoint
complete or the previous one untouched; the next run removes the half-written
temporary folder. Workers that share the folder write identical checkpoints;
the first rename wins and the others' copies are dropped.

Unlike `keras.callbacks.BackupAndRestore`, which rewrites one weights file in
place (a kill during the write leaves it empty and the run lost), and saves no
random state.
"""

import json
import os
import shutil
import socket

import keras
import numpy as np

CHECKPOINT_PREFIX = "checkpoint-"
WEIGHTS_FILE = "model.weights.h5"
RANDOM_STATE_FILE = "random_state.npz"
METADATA_FILE = "training_metadata.json"
PARTIAL_SUFFIX = ".partial"


class ResumableBackup(keras.callbacks.Callback):
    """Resumes `fit` from the newest checkpoint in `backup_dir` (weights,
    optimizer, random state and epoch), and writes a checkpoint there at each
    epoch's end that a kill at any instant cannot damage. Checkpoints are kept
    when training ends: the same `fit` run again after it finished does
    nothing more.

    Place it after callbacks that must act on an epoch before it is saved
    (`StopOnNaN`, `CSVLogger`). A checkpoint that cannot be read is refused
    with a `ValueError` naming it; nothing starts over silently.

    Example:
    >>> model.fit(dataset, epochs=10, callbacks=[ResumableBackup("run/backup")])  # doctest: +SKIP
    """

    def __init__(self, backup_dir: str):
        super().__init__()
        self.backup_dir = backup_dir

    def on_train_begin(self, logs=None):
        epochs = restore_checkpoint(self.model, self.backup_dir)
        if epochs:
            # As keras.callbacks.BackupAndRestore resumes: `fit` starts at this
            # epoch when a callback set it in `on_train_begin`.
            self.model._initial_epoch = epochs

    def on_epoch_end(self, epoch, logs=None):
        write_checkpoint(self.model, self.backup_dir, epoch + 1)


def random_state_variables(model: keras.Model) -> list:
    """The model's variables that are not weights: its seed generators' states."""
    weights = {id(v) for v in model.weights}
    return [v for v in model.variables if id(v) not in weights]


def latest_checkpoint(backup_dir: str) -> str | None:
    """The newest complete checkpoint folder in `backup_dir`, or None.
    Refuses (ValueError) a folder holding only a checkpoint of the layout
    before this one (one `latest.weights.h5`), rather than start over beside it."""
    epochs = [int(name[len(CHECKPOINT_PREFIX) :]) for name in _listing(backup_dir)
              if name.startswith(CHECKPOINT_PREFIX) and name[len(CHECKPOINT_PREFIX) :].isdigit()]  # fmt: skip
    if not epochs and os.path.isfile(os.path.join(backup_dir, "latest.weights.h5")):
        raise ValueError(
            f"{backup_dir} holds a checkpoint in the layout of an earlier keras_bert3 (latest.weights.h5), "
            "which this version does not resume. Finish that run with the version that started it, "
            f"or delete {backup_dir} to start this run over."
        )
    return os.path.join(backup_dir, f"{CHECKPOINT_PREFIX}{max(epochs)}") if epochs else None


def completed_epochs(backup_dir: str) -> int:
    """The epochs the newest complete checkpoint in `backup_dir` holds (0: none)."""
    latest = latest_checkpoint(backup_dir)
    return 0 if latest is None else int(os.path.basename(latest)[len(CHECKPOINT_PREFIX) :])


def write_checkpoint(model: keras.Model, backup_dir: str, epochs: int) -> str:
    """Writes `<backup_dir>/checkpoint-<epochs>` atomically (see the module's
    docstring), then removes older checkpoints; returns its path."""
    final = os.path.join(backup_dir, f"{CHECKPOINT_PREFIX}{epochs}")
    writer = f"{socket.gethostname()}.{os.getpid()}"  # Workers on other hosts may share the folder.
    partial = os.path.join(backup_dir, f".{CHECKPOINT_PREFIX}{epochs}.{writer}{PARTIAL_SUFFIX}")
    shutil.rmtree(partial, ignore_errors=True)
    os.makedirs(partial)
    write_checkpoint_files(model, partial, epochs)
    commit_checkpoint(partial, final)
    remove_older_checkpoints(backup_dir, epochs)
    return final


def write_checkpoint_files(model: keras.Model, folder: str, epochs: int) -> None:
    """The checkpoint's three files in `folder`, each flushed to disk."""
    model.save_weights(os.path.join(folder, WEIGHTS_FILE))
    states = {str(i): keras.ops.convert_to_numpy(v.value) for i, v in enumerate(random_state_variables(model))}
    np.savez(os.path.join(folder, RANDOM_STATE_FILE), **states)
    step = int(keras.ops.convert_to_numpy(model.optimizer.iterations)) if model.optimizer is not None else None
    with open(os.path.join(folder, METADATA_FILE), "w", encoding="utf-8") as f:
        json.dump({"epoch": epochs, "step": step}, f)
    for name in (WEIGHTS_FILE, RANDOM_STATE_FILE, METADATA_FILE):
        _flush_to_disk(os.path.join(folder, name))
    _flush_to_disk(folder)


def commit_checkpoint(partial: str, final: str) -> None:
    """Renames the complete folder `partial` to `final` in one step; where
    another worker sharing the folder already did, drops `partial`."""
    try:
        os.rename(partial, final)
    except OSError:
        if not os.path.isdir(final):
            raise
        shutil.rmtree(partial, ignore_errors=True)
        return
    _flush_to_disk(os.path.dirname(final))


def remove_older_checkpoints(backup_dir: str, epochs: int) -> None:
    """Removes the complete checkpoints older than `epochs`."""
    for name in _listing(backup_dir):
        number = name[len(CHECKPOINT_PREFIX) :]
        if name.startswith(CHECKPOINT_PREFIX) and number.isdigit() and int(number) < epochs:
            shutil.rmtree(os.path.join(backup_dir, name), ignore_errors=True)


def restore_checkpoint(model: keras.Model, backup_dir: str) -> int:
    """Loads the newest complete checkpoint of `backup_dir` into `model`
    (weights, optimizer state, random state) and returns its epochs; 0 where
    there is none. Removes half-written checkpoints left by a killed run.
    Raises ValueError, naming the checkpoint, where it cannot be read."""
    for name in _listing(backup_dir):
        if name.endswith(PARTIAL_SUFFIX):
            shutil.rmtree(os.path.join(backup_dir, name), ignore_errors=True)
    latest = latest_checkpoint(backup_dir)
    if latest is None:
        return 0
    try:
        if model.optimizer is not None and not model.optimizer.built:
            model.optimizer.build(model.trainable_variables)
        model.load_weights(os.path.join(latest, WEIGHTS_FILE))
        variables = random_state_variables(model)
        with np.load(os.path.join(latest, RANDOM_STATE_FILE)) as saved:
            if len(saved.files) != len(variables):
                raise ValueError(f"it holds {len(saved.files)} random states; the model has {len(variables)}")
            for index, variable in enumerate(variables):
                variable.assign(saved[str(index)])
    except Exception as error:  # h5py and Keras raise OSError, ValueError, KeyError...
        raise ValueError(
            f"Cannot resume from the checkpoint {latest}: {type(error).__name__}: {error}. "
            "It is damaged or was written by another model. Nothing was changed; "
            f"restore it, or delete {backup_dir} to start this run over."
        ) from error
    return completed_epochs(backup_dir)


def _listing(folder: str) -> list[str]:
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


def _flush_to_disk(path: str) -> None:
    """fsync of a file or folder: its contents (a folder's: its entries) reach the disk."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
