"""A Keras layer whose inputs are strings (tf.string tensors, Python strings,
lists of them), as keras-hub's `PreprocessingLayer` is.

Keras converts every positional input of a layer to a backend tensor before
`call`, which fails for strings on JAX and for ragged inputs; the only switch
is private (`Layer._convert_input_args`, `Layer._allow_non_tensor_positional_args`),
and keras-hub sets the same two attributes
(keras_hub/src/layers/preprocessing/preprocessing_layer.py).
"""

import keras

from keras_bert3.upstream.private_api import require_private

_WHY = "passing strings to preprocessing layers; keras-hub's PreprocessingLayer sets it too"


class StringInputLayer(keras.layers.Layer):
    """A `keras.layers.Layer` that receives its inputs as given: strings and
    ragged tensors pass to `call` unconverted.
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        for name in ("_convert_input_args", "_allow_non_tensor_positional_args"):
            require_private(self, name, package=keras, why=_WHY)  # Set by Layer.__init__.
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
