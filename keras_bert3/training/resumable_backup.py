"""Checkpoints that survive a kill at any instant, a full disk and a diverging run, and the exact resume from them.

A checkpoint is a folder, `<backup_dir>/checkpoint-<epochs>[+<batches>]`, of weights and optimizer state, the seed
generators' states (which `model.weights` leaves out), the metrics' running sums, and the epochs, batches and step done.
It is written only where every variable is finite (else `TrainingDiverged`), under a temporary name, flushed and renamed
in one step before the previous one is removed: a kill at any instant leaves one complete checkpoint (where
`keras.callbacks.BackupAndRestore` rewrites its file in place). Workers sharing the folder write identical checkpoints;
the first rename wins."""

import json
import logging
import os
import re
import shutil
import socket

import keras
import numpy as np

from keras_bert3.files.weight_files import load_keras_weights
from keras_bert3.files.weight_files import save_keras_weights
from keras_bert3.files.whole_folders import flush_to_disk
from keras_bert3.files.write_failed import WriteFailed
from keras_bert3.training.deferred_signals import TrainingStopped
from keras_bert3.training.divergence import TrainingDiverged
from keras_bert3.upstream.compiled_state import start_fit_at_epoch

CHECKPOINT_PREFIX = "checkpoint-"
CHECKPOINT_NAME = re.compile(r"^checkpoint-(\d+)(?:\+(\d+))?$")  # checkpoint-<epochs>[+<batches>]
WEIGHTS_FILE = "model.weights.h5"
RANDOM_STATE_FILE = "random_state.npz"
METRIC_STATES_FILE = "metric_states.npz"
METADATA_FILE = "training_metadata.json"
PARTIAL_SUFFIX = ".partial"

logger = logging.getLogger("keras_bert3.training")


class ResumableBackup(keras.callbacks.Callback):
    """Resumes `fit` from the newest checkpoint in `backup_dir` and writes one there at each epoch's end (see the module
    docstring); a finished `fit` run again does nothing. With `stop_on` (a `DeferredSignals` around `fit`), a signal
    ends training after the step under way, with a checkpoint and `TrainingStopped`; resumed, the run gives the history
    and weights of one never stopped, given the data from `checkpoint_position` on. Place it after `StopOnNaN` and
    `CSVLogger`. A checkpoint that cannot be read raises a `ValueError` naming it.

    Example:
    >>> with DeferredSignals() as stop:
    ...     model.fit(dataset, epochs=10, callbacks=[ResumableBackup("run/backup", stop_on=stop)])
    """

    def __init__(self, backup_dir: str, *, stop_on=None, save_every: int | None = None, keep: int = 1):
        """`save_every`: batches between checkpoints within an epoch too; `keep`: the newest checkpoints kept."""
        super().__init__()
        self.backup_dir = backup_dir
        self.stop_on = stop_on
        self.save_every = save_every
        self.keep = keep
        self._resumed_at = (0, 0)  # (epochs, batches) of the checkpoint restored.
        self._metric_states = None
        self._epoch = 0
        self._ends_early = False

    def on_train_begin(self, logs=None):
        self._resumed_at, self._metric_states = restore_checkpoint(self.model, self.backup_dir)
        if self._resumed_at != (0, 0):
            latest = os.path.join(self.backup_dir, checkpoint_name(*self._resumed_at))
            logger.info(f"Resumed from the checkpoint {latest} at step {optimizer_step(self.model):,}.")
        if self._resumed_at[0]:
            start_fit_at_epoch(self.model, self._resumed_at[0])

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch
        self._ends_early = False
        if self._cut_epoch() and self._metric_states is not None:
            restore_metric_states(self.model, self._metric_states)  # After Keras reset them for the epoch.

    def on_train_batch_end(self, batch, logs=None):
        done = batch + 1 + (self._resumed_at[1] if self._cut_epoch() else 0)  # Batches of this epoch done.
        steps = self.params.get("steps") if self.params else None
        if self.stop_on is not None and self.stop_on.received and (steps is None or done < steps):
            path = write_checkpoint(self.model, self.backup_dir, self._epoch, done, keep=self.keep)
            raise TrainingStopped(self.stop_on.received, optimizer_step(self.model), path)
        position = self._epoch * (steps or 0) + done  # Batches of the whole fit (epochs of `steps` batches).
        if self.save_every and position % self.save_every == 0 and (steps is None or done < steps):
            write_checkpoint(self.model, self.backup_dir, self._epoch, done, keep=self.keep)
        if self._cut_epoch() and steps is not None and done >= steps:
            # The cut epoch ends here; `on_epoch_end` clears the flag for the next.
            self.model.stop_training = self._ends_early = True

    def on_epoch_end(self, epoch, logs=None):
        path = write_checkpoint(self.model, self.backup_dir, epoch + 1, keep=self.keep)
        if self._ends_early:
            self.model.stop_training = self._ends_early = False
        if self.stop_on is not None and self.stop_on.received:
            raise TrainingStopped(self.stop_on.received, optimizer_step(self.model), path)

    def _cut_epoch(self) -> bool:
        """True in the epoch a mid-epoch checkpoint was restored into."""
        epochs, batches = self._resumed_at
        return batches > 0 and self._epoch == epochs


def optimizer_step(model: keras.Model) -> int | None:
    return int(keras.ops.convert_to_numpy(model.optimizer.iterations)) if model.optimizer is not None else None


def random_state_variables(model: keras.Model) -> list:
    """The model's variables that are not weights or metrics: its seed generators' states."""
    kept = {id(v) for v in model.weights} | {id(v) for v in model.metrics_variables}
    return [v for v in model.variables if id(v) not in kept]


def checkpoint_position(path: str) -> tuple[int, int]:
    """(epochs, batches) done at the checkpoint folder `path` (batches of the next epoch)."""
    found = CHECKPOINT_NAME.match(os.path.basename(path))
    return int(found.group(1)), int(found.group(2) or 0)


def checkpoint_name(epochs: int, batches: int = 0) -> str:
    return f"{CHECKPOINT_PREFIX}{epochs}" + (f"+{batches}" if batches else "")


def latest_checkpoint(backup_dir: str) -> str | None:
    """The newest complete checkpoint folder in `backup_dir`, or None. Refuses
    (ValueError) a folder holding only an earlier layout's `latest.weights.h5`."""
    names = [name for name in _listing(backup_dir) if CHECKPOINT_NAME.match(name)]
    if not names and os.path.isfile(os.path.join(backup_dir, "latest.weights.h5")):
        raise ValueError(
            f"{backup_dir} holds a checkpoint in the layout of an earlier keras_bert3 (latest.weights.h5), "
            "which this version does not resume. Finish that run with the version that started it, "
            f"or delete {backup_dir} to start this run over."
        )
    return os.path.join(backup_dir, max(names, key=checkpoint_position)) if names else None


def resume_position(backup_dir: str) -> tuple[int, int]:
    """(epochs, batches) of the newest complete checkpoint in `backup_dir`; (0, 0) where there is none."""
    latest = latest_checkpoint(backup_dir)
    return (0, 0) if latest is None else checkpoint_position(latest)


def checkpoint_step(path: str | None) -> int | None:
    """The optimizer step a checkpoint folder holds (None: no checkpoint, or no step recorded)."""
    if path is None:
        return None
    try:
        with open(os.path.join(path, METADATA_FILE), encoding="utf-8") as f:
            return json.load(f).get("step")
    except (OSError, ValueError):
        return None


def write_checkpoint(model: keras.Model, backup_dir: str, epochs: int, batches: int = 0, *, keep: int = 1) -> str:
    """Writes `<backup_dir>/checkpoint-<epochs>[+<batches>]` atomically, removes older
    ones past the newest `keep` and returns its path; raises `TrainingDiverged` where a variable is not
    finite, `WriteFailed` where the folder cannot be written, leaving nothing."""
    check_finite(model, backup_dir)
    final = os.path.join(backup_dir, checkpoint_name(epochs, batches))
    writer = f"{socket.gethostname()}.{os.getpid()}"  # Workers on other hosts may share the folder.
    partial = os.path.join(backup_dir, f".{os.path.basename(final)}.{writer}{PARTIAL_SUFFIX}")
    try:
        shutil.rmtree(partial, ignore_errors=True)
        os.makedirs(partial)
        write_checkpoint_files(model, partial, epochs, batches)
    except BaseException as error:
        shutil.rmtree(partial, ignore_errors=True)
        if isinstance(error, OSError):
            previous = latest_checkpoint(backup_dir)
            kept = (
                f"The checkpoint before it, {previous}, is intact: free the space (or fix the folder) and run "
                "again to resume from it."
                if previous
                else "No checkpoint was written before it."
            )
            raise WriteFailed("the checkpoint", final, getattr(error, "__cause__", None) or error, kept=kept) from error
        raise
    commit_checkpoint(partial, final)
    remove_older_checkpoints(backup_dir, (epochs, batches), keep=keep)
    return final


def check_finite(model: keras.Model, backup_dir: str) -> None:
    """Raises `TrainingDiverged` where a weight or optimizer variable is not finite."""
    variables = [
        v
        for v in model.weights + (model.optimizer.variables if model.optimizer is not None else [])
        if "float" in str(v.dtype)
    ]
    # One flag per variable, reduced where the variable lives; `.value` is the local copy under a strategy.
    finite = [bool(keras.ops.convert_to_numpy(keras.ops.all(keras.ops.isfinite(v.value)))) for v in variables]
    if all(finite):
        return
    names = [v.path for v, ok in zip(variables, finite) if not ok]
    what = (
        f"its update left NaN or infinite values in {len(names)} of {len(variables)} weight and optimizer "
        f"variables ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})"
    )
    last = latest_checkpoint(backup_dir)
    raise TrainingDiverged(optimizer_step(model), what, last, checkpoint_step(last))


def write_checkpoint_files(model: keras.Model, folder: str, epochs: int, batches: int = 0) -> None:
    """The checkpoint's four files in `folder`, each flushed to disk."""
    save_keras_weights(model, os.path.join(folder, WEIGHTS_FILE), what="the checkpoint's weights")
    _save_arrays(os.path.join(folder, RANDOM_STATE_FILE), random_state_variables(model))
    _save_arrays(os.path.join(folder, METRIC_STATES_FILE), model.metrics_variables)
    with open(os.path.join(folder, METADATA_FILE), "w", encoding="utf-8") as f:
        json.dump({"epoch": epochs, "batches": batches, "step": optimizer_step(model)}, f)
    for name in (WEIGHTS_FILE, RANDOM_STATE_FILE, METRIC_STATES_FILE, METADATA_FILE):
        flush_to_disk(os.path.join(folder, name))
    flush_to_disk(folder)


def _save_arrays(path: str, variables: list) -> None:
    # The variable, not its `.value`: under a TensorFlow strategy a metric's is a SyncOnReadVariable, which
    # converts to numpy (its replicas summed) only through the Keras variable.
    np.savez(path, **{str(i): keras.ops.convert_to_numpy(v) for i, v in enumerate(variables)})


def commit_checkpoint(partial: str, final: str) -> None:
    """Renames the complete folder `partial` to `final`, or drops it where another worker did."""
    try:
        os.rename(partial, final)
    except OSError:
        if not os.path.isdir(final):
            raise
        shutil.rmtree(partial, ignore_errors=True)
        return
    flush_to_disk(os.path.dirname(final))


def remove_older_checkpoints(backup_dir: str, position: tuple[int, int], *, keep: int = 1) -> None:
    """Removes the complete checkpoints older than `position` (epochs, batches), but the newest `keep` in all (the
    one at `position` among them)."""
    older = [n for n in _listing(backup_dir) if CHECKPOINT_NAME.match(n) and checkpoint_position(n) < tuple(position)]
    older.sort(key=checkpoint_position)
    for name in older[: max(len(older) - (keep - 1), 0)]:
        shutil.rmtree(os.path.join(backup_dir, name), ignore_errors=True)


def restore_checkpoint(model: keras.Model, backup_dir: str) -> tuple[tuple[int, int], list | None]:
    """Loads the newest complete checkpoint of `backup_dir` into `model`, removing half-written ones; returns its
    (epochs, batches) and metric states, or ((0, 0), None). Raises ValueError, naming it, where it cannot be read."""
    for name in _listing(backup_dir):
        if name.endswith(PARTIAL_SUFFIX):
            shutil.rmtree(os.path.join(backup_dir, name), ignore_errors=True)
    latest = latest_checkpoint(backup_dir)
    if latest is None:
        return (0, 0), None
    try:
        if model.optimizer is not None and not model.optimizer.built:
            model.optimizer.build(model.trainable_variables)
        load_keras_weights(model, os.path.join(latest, WEIGHTS_FILE))
        random_state = random_state_variables(model)
        saved = _load_arrays(os.path.join(latest, RANDOM_STATE_FILE))
        if len(saved) != len(random_state):
            raise ValueError(f"it holds {len(saved)} random states; the model has {len(random_state)}")
        for variable, value in zip(random_state, saved):
            variable.assign(value)
        metric_states = None
        if os.path.isfile(os.path.join(latest, METRIC_STATES_FILE)):  # Absent in checkpoints of earlier versions.
            metric_states = _load_arrays(os.path.join(latest, METRIC_STATES_FILE))
    except Exception as error:  # h5py and Keras raise OSError, ValueError, KeyError...
        raise ValueError(
            f"Cannot resume from the checkpoint {latest}: {type(error).__name__}: {str(error).rstrip('.')}. "
            "It is damaged or was written by another model. Nothing was changed; "
            f"restore it, or delete {backup_dir} to start this run over."
        ) from error
    return checkpoint_position(latest), metric_states


def _load_arrays(path: str) -> list:
    """The arrays `_save_arrays` wrote, in order."""
    with np.load(path) as saved:
        return [saved[str(index)] for index in range(len(saved.files))]


def restore_metric_states(model: keras.Model, states: list) -> None:
    """Sets the metrics' running sums to a mid-epoch checkpoint's; metrics that
    Keras builds at the first step do not exist yet, and a warning says so."""
    variables = model.metrics_variables
    if len(variables) != len(states):
        logger.warning(
            "Resumed mid-epoch: the metrics of this epoch cover only the batches after the checkpoint "
            "(the model has %d metric variables before its first step, the checkpoint %d).",
            len(variables),
            len(states),
        )
        return
    for variable, value in zip(variables, states):
        variable.assign(value)


def _listing(folder: str) -> list[str]:
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []
