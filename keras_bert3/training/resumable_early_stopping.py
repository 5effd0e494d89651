"""Early stopping that a resumed run continues as if never stopped."""

import csv
import os

import keras

from keras_bert3.files.weight_files import save_keras_weights

BEST_WEIGHTS_PREFIX = "best-epoch-"


class ResumableEarlyStopping(keras.callbacks.EarlyStopping):
    """`keras.callbacks.EarlyStopping` on `monitor` that survives a stop and resume:
    each `fit` replays the values `history_csv` (a `CSVLogger` file) holds, and the
    best weights are kept in `<folder>/best-epoch-<n>.weights.h5`, not in memory.
    Place it after `ResumableBackup`: a run killed between the two then finds the
    best epoch's weights in the checkpoint it resumes from."""

    def __init__(self, history_csv: str, folder: str, *, monitor: str, mode: str, patience: int):
        super().__init__(monitor=monitor, mode=mode, patience=patience)
        self.history_csv = history_csv
        self.folder = folder

    def on_train_begin(self, logs=None):
        epochs = self._replay(logs)
        if epochs and self.best_weights_file() is None and self.best_epoch == epochs - 1:
            self._keep_best_weights(self.best_epoch)  # The checkpoint just restored holds them.

    def _replay(self, logs=None) -> int:
        """Starts afresh, then takes the logged epochs' values as if they had just ended; returns their number."""
        super().on_train_begin(logs)
        values = logged_values(self.history_csv, self.monitor)
        for epoch, value in enumerate(values):
            super().on_epoch_end(epoch, {self.monitor: value})
        return len(values)

    def on_epoch_end(self, epoch, logs=None):
        best = self.best
        super().on_epoch_end(epoch, logs)
        if self.best is not best:
            self._keep_best_weights(epoch)

    def stops_before(self, model) -> bool:
        """Whether the epochs already logged have run out of patience (the run is over: no `fit` is needed)."""
        self.set_model(model)
        model.stop_training = False
        self._replay()  # Writes nothing: the model does not hold the checkpoint's weights yet.
        stopped, model.stop_training = model.stop_training, False
        return stopped

    def best_weights_file(self) -> str | None:
        path = os.path.join(self.folder, f"{BEST_WEIGHTS_PREFIX}{self.best_epoch + 1}.weights.h5")
        return path if os.path.isfile(path) else None

    def _keep_best_weights(self, epoch: int) -> None:
        path = os.path.join(self.folder, f"{BEST_WEIGHTS_PREFIX}{epoch + 1}.weights.h5")
        partial = f"{path}.partial.h5"
        save_keras_weights(self.model, partial, what="the best epoch's weights")
        os.replace(partial, path)
        for name in os.listdir(self.folder):
            if name.startswith(BEST_WEIGHTS_PREFIX) and os.path.join(self.folder, name) != path:
                os.remove(os.path.join(self.folder, name))


def logged_values(history_csv: str, column: str) -> list[float]:
    """The values of `column` in a `CSVLogger` file, one an epoch (none where there is no file)."""
    if not os.path.isfile(history_csv):
        return []
    with open(history_csv, newline="", encoding="utf-8") as f:
        return [float(row[column]) for row in csv.DictReader(f) if row.get(column) not in (None, "", "NA")]
