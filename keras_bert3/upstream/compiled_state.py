"""What Keras keeps where no public API gives it: the loss tracker of a
compiled model (the `Mean` metric that `metrics` lists for the loss, which a
task replaces with one that counts real rows only), the learning-rate
schedule object of an optimizer (`learning_rate` gives its current value),
which a schedule sized by the first fit is resized through, the build of
a compiled model's metrics, which TensorFlow's `fit` defers to its first step,
and the epoch a `fit` under way starts at.

Private APIs: `keras.Model._loss_tracker` (set in `Trainer.__init__` and
`compile`), `keras.optimizers.Optimizer._learning_rate` (set in its
`__init__`), `keras.Model._symbolic_build` (the trainer's build of model,
loss and metrics on symbolic inputs) and `keras.Model._initial_epoch` (set in
`Trainer.__init__`; `fit` reads it after its callbacks' `on_train_begin`, where
`keras.callbacks.BackupAndRestore` sets it).
"""

import keras

from keras_bert3.upstream.private_api import require_private

# Both are set in `__init__`: checked on the object given (building one at
# import would start TensorFlow's runtime, which processes configure first).


def loss_tracker(model: keras.Model):
    """The `Mean` metric Keras reports as `loss` for a compiled `model` (None before `compile`)."""
    require_private(model, "_loss_tracker", package=keras, why="the task's loss counted over real rows")
    return model._loss_tracker


def learning_rate_schedule(optimizer: keras.optimizers.Optimizer):
    """`optimizer`'s learning rate as given: a schedule object, a float or a variable."""
    require_private(optimizer, "_learning_rate", package=keras, why="the schedule a fit sizes to its steps")
    return optimizer._learning_rate


def build_compiled_metrics(model: keras.Model, batch_spec) -> None:
    """Builds `model`'s compiled metrics (and loss) for batches of
    `batch_spec` (a structure of objects with `shape` and `dtype`, e.g. a
    `tf.data` dataset's `element_spec`: `(inputs, labels)`), without running
    a step; a metric's state can then be set before the first step (a
    mid-epoch resume).
    """
    require_private(model, "_symbolic_build", package=keras, why="metric states restored before the first step")
    # Unknown sizes as 1: JAX's shape inference needs sizes, and the metrics' state does not depend on them.
    symbolic = lambda spec: keras.KerasTensor([1 if d is None else d for d in spec.shape], spec.dtype.name)  # noqa: E731
    model._symbolic_build(data_batch=keras.tree.map_structure(symbolic, batch_spec))


def start_fit_at_epoch(model: keras.Model, epoch: int) -> None:
    """Makes the `fit` under way start at `epoch`; call it from a callback's
    `on_train_begin`, as `keras.callbacks.BackupAndRestore` resumes.
    """
    require_private(model, "_initial_epoch", package=keras, why="a fit resumed from a checkpoint's epoch")
    model._initial_epoch = epoch
