"""Every layer inside a model, nested ones included: `Model.layers` lists the top level only.

Private API (Keras): `keras.layers.Layer._flatten_layers`."""

import keras

from keras_bert3.upstream.private_api import require_private

require_private(keras.layers.Layer, "_flatten_layers", package=keras, why="setting each layer's dtype policy")


def all_layers(model: keras.layers.Layer) -> list:
    """`model` and every layer it holds, at any depth, each once."""
    return list(model._flatten_layers(include_self=True, recursive=True))
