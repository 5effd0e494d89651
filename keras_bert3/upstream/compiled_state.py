"""What Keras keeps where no public API gives it: a compiled model's loss tracker, an optimizer's schedule object, the
build of compiled metrics (which TensorFlow's `fit` defers to its first step), and the epoch a `fit` starts at.

Private APIs (Keras): `Model._loss_tracker` (set in `Trainer.__init__` and
`compile`), `Optimizer._learning_rate` (set in `__init__`), `Model._symbolic_build`
and `Model._initial_epoch` (read by `fit` after its callbacks' `on_train_begin`)."""

import keras

from keras_bert3.upstream.private_api import require_private

# Checked on the object given: building one at import would start TensorFlow's runtime.


def loss_tracker(model: keras.Model):
    """The `Mean` metric Keras reports as `loss` for a compiled `model` (None before `compile`)."""
    require_private(model, "_loss_tracker", package=keras, why="the task's loss counted over real rows")
    return model._loss_tracker


def learning_rate_schedule(optimizer: keras.optimizers.Optimizer):
    """`optimizer`'s learning rate as given: a schedule object, a float or a variable."""
    require_private(optimizer, "_learning_rate", package=keras, why="the schedule a fit sizes to its steps")
    return optimizer._learning_rate


def build_compiled_metrics(model: keras.Model, batch_spec) -> None:
    """Builds `model`'s compiled metrics and loss for batches of `batch_spec` (objects with `shape` and `dtype`, e.g. a
    dataset's `element_spec`) without a step, so that their state can be set before the first (a mid-epoch resume)."""
    require_private(model, "_symbolic_build", package=keras, why="metric states restored before the first step")
    # Unknown sizes (batch, length) as 2: JAX's shape inference needs sizes, and the metrics' state does not depend on
    # them. A length of 1 would trace attention as a softmax over one key, which Keras warns of as a likely bug.
    symbolic = lambda spec: keras.KerasTensor([2 if d is None else d for d in spec.shape], spec.dtype.name)  # noqa: E731
    model._symbolic_build(data_batch=keras.tree.map_structure(symbolic, batch_spec))


def start_fit_at_epoch(model: keras.Model, epoch: int) -> None:
    """Makes the `fit` under way start at `epoch`; call it from `on_train_begin`."""
    require_private(model, "_initial_epoch", package=keras, why="a fit resumed from a checkpoint's epoch")
    model._initial_epoch = epoch
