"""Early stopping across a resume: the logged epochs replayed, the best
epoch's weights kept in a file, and taken from the restored checkpoint only
where the run stopped between that checkpoint and the file."""

import csv
import os

import keras
import numpy as np

from keras_bert3.training.resumable_early_stopping import ResumableEarlyStopping


def write_history(path, values):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["epoch", "val_accuracy"])
        writer.writerows(enumerate(values))


def tiny_model(value: float) -> keras.Model:
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, kernel_initializer="zeros")])
    model.layers[0].kernel.assign(np.full((2, 1), value, "float32"))
    return model


def test_replayed_epochs_decide_the_stop_and_the_best_weights_come_from_the_checkpoint(tmp_path):
    history = tmp_path / "history.csv"
    write_history(history, [0.5, 0.7])  # The last epoch is the best; its weights file was never written.
    stopping = ResumableEarlyStopping(str(history), str(tmp_path), monitor="val_accuracy", mode="max", patience=1)
    fresh = tiny_model(0.0)  # Before the checkpoint is restored: not the best weights.
    assert not stopping.stops_before(fresh) and os.listdir(tmp_path) == ["history.csv"]
    restored = tiny_model(1.0)  # As `ResumableBackup` leaves the model: the checkpoint of epoch 2.
    stopping.set_model(restored)
    stopping.on_train_begin()
    assert stopping.best_epoch == 1 and os.path.basename(stopping.best_weights_file()) == "best-epoch-2.weights.h5"
    check = tiny_model(0.0)
    check.load_weights(stopping.best_weights_file())
    assert (check.layers[0].kernel.numpy() == 1.0).all()
    write_history(history, [0.5, 0.7, 0.6, 0.6])  # Two epochs without a better score: patience 1 ran out.
    assert ResumableEarlyStopping(
        str(history), str(tmp_path), monitor="val_accuracy", mode="max", patience=1
    ).stops_before(fresh)
