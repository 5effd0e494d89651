"""Ends a `fit` after a number of batches, where that is no whole number of its epochs."""

import keras


class StopAfterBatches(keras.callbacks.Callback):
    """Stops `fit` once `total` batches are done, counting from `done` (those of the checkpoint it resumes from): the
    last epoch is then cut short. Reads no value from the device, so it costs a step nothing.

    Example:
    >>> model.fit(data, epochs=4, steps_per_epoch=100, callbacks=[StopAfterBatches(350)])
    """

    def __init__(self, total: int, done: int = 0):
        super().__init__()
        self.total, self.done = total, done

    def on_train_batch_end(self, batch, logs=None):
        self.done += 1
        if self.done >= self.total:
            self.model.stop_training = True
