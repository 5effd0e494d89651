"""A callback that stops training at the first NaN or infinite loss, before
any checkpoint can be overwritten with broken weights."""

import math

import keras


class StopOnNaN(keras.callbacks.Callback):
    """Raises `FloatingPointError` naming the step when the loss is not finite.

    Unlike `keras.callbacks.TerminateOnNaN`, which lets the epoch end (and so
    lets a checkpoint callback save the broken weights), this raises at once: the
    last checkpoint stays the last good one.

    Args:
        checkpoint_dir: str or None. Named in the message, for the user.

    Example:
    >>> model.fit(dataset, callbacks=[StopOnNaN("run/backup"), ResumableBackup("run/backup")])
    """

    def __init__(self, checkpoint_dir: str | None = None):
        super().__init__()
        self.checkpoint_dir = checkpoint_dir

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is None:
            return
        loss = float(loss)
        if not math.isfinite(loss):
            step = int(self.model.optimizer.iterations)
            where = f" The last good checkpoint is kept in {self.checkpoint_dir}." if self.checkpoint_dir else ""
            raise FloatingPointError(
                f"The loss became {loss} at step {step}.{where} Lower the learning "
                "rate, check the data, or use float32 instead of mixed float16."
            )
