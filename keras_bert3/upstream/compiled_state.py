"""Two objects Keras keeps where no public API gives them: the loss tracker
of a compiled model (the `Mean` metric that `metrics` lists for the loss,
which a task replaces with one that counts real rows only) and the
learning-rate schedule object of an optimizer (`learning_rate` gives its
current value), which a schedule sized by the first fit is resized through.

Private APIs: `keras.Model._loss_tracker` (set in `Trainer.__init__` and
`compile`) and `keras.optimizers.Optimizer._learning_rate` (set in its
`__init__`).
"""

import keras

from keras_bert3.upstream.private_api import require_private

# Both are set in `__init__`: checked on the object given (building one at
# import would start TensorFlow's runtime, which processes configure first).


def loss_tracker(model: keras.Model):
    """The `Mean` metric Keras reports as `loss` for a compiled `model` (None before `compile`).

    Example:
    >>> loss_tracker(model).name
    'loss'
    """
    require_private(model, "_loss_tracker", package=keras, why="the task's loss counted over real rows")
    return model._loss_tracker


def learning_rate_schedule(optimizer: keras.optimizers.Optimizer):
    """`optimizer`'s learning rate as given: a schedule object, a float or a variable.

    Example:
    >>> learning_rate_schedule(keras.optimizers.Adam(learning_rate=schedule)) is schedule
    True
    """
    require_private(optimizer, "_learning_rate", package=keras, why="the schedule a fit sizes to its steps")
    return optimizer._learning_rate
