"""A callback that stops training at the first NaN or infinite loss, before
any checkpoint can be written with broken weights."""

import math

import keras

from keras_bert3.training.divergence import TrainingDiverged
from keras_bert3.training.resumable_backup import checkpoint_step
from keras_bert3.training.resumable_backup import latest_checkpoint
from keras_bert3.training.resumable_backup import optimizer_step


class StopOnNaN(keras.callbacks.Callback):
    """Raises `TrainingDiverged` (a `FloatingPointError`) naming the step, and the newest checkpoint in `checkpoint_dir`
    (where `ResumableBackup` writes) if given, when the loss is not finite: at once, unlike
    `keras.callbacks.TerminateOnNaN`, so no checkpoint callback saves the broken weights.

    Example:
    >>> model.fit(dataset, callbacks=[StopOnNaN("run/backup"), ResumableBackup("run/backup")])
    """

    def __init__(self, checkpoint_dir: str | None = None):
        super().__init__()
        self.checkpoint_dir = checkpoint_dir
        # The epoch's first loss: that of the last checkpoint's weights.
        self.loss_at_last_checkpoint = None

    def on_epoch_begin(self, epoch, logs=None):
        self.loss_at_last_checkpoint = None

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if self.loss_at_last_checkpoint is None and loss is not None:
            self.loss_at_last_checkpoint = float(loss)
        if loss is None or math.isfinite(float(loss)):
            return
        last = latest_checkpoint(self.checkpoint_dir) if self.checkpoint_dir else None
        raise TrainingDiverged(
            optimizer_step(self.model), f"the loss became {float(loss)}", last, checkpoint_step(last)
        )
