"""A callback that stops training at the first NaN or infinite loss, before
any checkpoint can be written with broken weights."""

import math

import keras

from keras_bert3.training.divergence import TrainingDiverged
from keras_bert3.training.resumable_backup import checkpoint_step
from keras_bert3.training.resumable_backup import latest_checkpoint
from keras_bert3.training.resumable_backup import optimizer_step


class StopOnNaN(keras.callbacks.Callback):
    """Raises `TrainingDiverged` (a `FloatingPointError`) naming the step and
    the last checkpoint in `checkpoint_dir` when the loss is not finite.

    Unlike `keras.callbacks.TerminateOnNaN`, which lets the epoch end (and so
    lets a checkpoint callback save the broken weights), this raises at once.
    A loss can be finite while its update is not: `ResumableBackup` checks the
    weights themselves before it writes a checkpoint.

    Args:
        checkpoint_dir: str or None. Where `ResumableBackup` writes; its
            newest checkpoint is named in the message.

    Example:
    >>> model.fit(dataset, callbacks=[StopOnNaN("run/backup"), ResumableBackup("run/backup")])
    """

    def __init__(self, checkpoint_dir: str | None = None):
        super().__init__()
        self.checkpoint_dir = checkpoint_dir
        # The loss of the first step of the epoch under way: computed with the
        # weights of the checkpoint written at the epoch before's end.
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
