"""A Keras layer whose string and ragged inputs reach `call` unconverted, as in
keras-hub's `PreprocessingLayer` (Keras' conversion fails for strings on JAX).

Private API (Keras): `Layer._convert_input_args`, `Layer._allow_non_tensor_positional_args`,
the only switch, which keras-hub sets too (keras_hub/src/layers/preprocessing/preprocessing_layer.py)."""

import keras

from keras_bert3.upstream.private_api import require_private

_WHY = "passing strings to preprocessing layers; keras-hub's PreprocessingLayer sets it too"


class StringInputLayer(keras.layers.Layer):
    """A `keras.layers.Layer` whose strings and ragged inputs reach `call` unconverted."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        for name in ("_convert_input_args", "_allow_non_tensor_positional_args"):
            require_private(self, name, package=keras, why=_WHY)  # Set by Layer.__init__.
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
