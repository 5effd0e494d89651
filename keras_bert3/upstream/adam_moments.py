"""Adam's moment slots of one variable, for `BertAdamW`'s own `update_step`.

Private APIs (Keras): `keras.optimizers.Adam._momentums`, `._velocities` (set in
`build`) and `Optimizer._get_variable_index`, read as Keras' own Adam reads them."""

import keras

from keras_bert3.upstream.private_api import require_private

require_private(keras.optimizers.Adam, "_get_variable_index", package=keras, why="BertAdamW's update step")


def adam_moments(optimizer: keras.optimizers.Adam, variable):
    """The first and second moment variables that a built Adam `optimizer` keeps for `variable`."""
    index = optimizer._get_variable_index(variable)
    return optimizer._momentums[index], optimizer._velocities[index]
