"""The model's random state (dropout's seed generators) saved beside each
checkpoint and restored on resume, so that a resumed run draws the dropout
masks an uninterrupted run would have drawn. `keras.callbacks.BackupAndRestore`
saves the weights and the optimizer, not these states (`model.variables`
holds them, `model.weights` does not)."""

import os

import keras
import numpy as np


def random_state_variables(model: keras.Model) -> list:
    """The model's variables that are not weights: its seed generators' states."""
    weights = {id(v) for v in model.weights}
    return [v for v in model.variables if id(v) not in weights]


class RandomStateBackup(keras.callbacks.Callback):
    """Writes `random_state-<epoch>.npz` in `directory` at each epoch's end
    (keeping the last two), and on `fit`'s start restores the one of the epoch
    the run resumes after. Place it before `BackupAndRestore` in the callbacks:
    a run killed between the two writes still finds the state of the epoch its
    checkpoint holds.

    Example:
    >>> callbacks = [RandomStateBackup("run/backup", completed_epochs=2),  # doctest: +SKIP
    ...              keras.callbacks.BackupAndRestore("run/backup")]
    """

    def __init__(self, directory: str, completed_epochs: int):
        super().__init__()
        self.directory = directory
        self.completed_epochs = completed_epochs

    def _path(self, epoch: int) -> str:
        return os.path.join(self.directory, f"random_state-{epoch}.npz")

    def on_train_begin(self, logs=None):
        if self.completed_epochs == 0:
            return
        path = self._path(self.completed_epochs - 1)
        if not os.path.isfile(path):
            print(f"No random state saved for epoch {self.completed_epochs} ({path}): the resumed run draws "
                  "new dropout masks; its examples and weights are still those of the checkpoint.")  # fmt: skip
            return
        variables = random_state_variables(self.model)
        with np.load(path) as saved:
            if len(saved.files) != len(variables):
                raise ValueError(f"{path} holds {len(saved.files)} random states; the model has {len(variables)}.")
            for index, variable in enumerate(variables):
                variable.assign(saved[str(index)])

    def on_epoch_end(self, epoch, logs=None):
        os.makedirs(self.directory, exist_ok=True)
        states = {str(i): keras.ops.convert_to_numpy(v.value) for i, v in enumerate(random_state_variables(self.model))}
        partial = f"{self._path(epoch)}.{os.getpid()}.partial.npz"  # Workers may share the directory.
        np.savez(partial, **states)
        os.replace(partial, self._path(epoch))
        old = self._path(epoch - 2)
        if os.path.isfile(old):
            os.remove(old)
