"""The choices of a multiple-choice example as rows of the batch, and back: BERT scores each (context, choice) pair
on its own (Devlin et al. 2019, section 4.4, SWAG), so `(batch, choices, length)` inputs become `(batch * choices,
length)` rows, and their scores `(batch, choices)` again."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_bert3")
class ChoicesAsRows(keras.layers.Layer):
    """`(batch, choices, length)` -> `(batch * choices, length)`."""

    def call(self, inputs):
        return ops.reshape(inputs, (-1, ops.shape(inputs)[-1]))

    def compute_output_shape(self, input_shape):
        return (None, input_shape[-1])


@keras.saving.register_keras_serializable(package="keras_bert3")
class RowsAsChoices(keras.layers.Layer):
    """Scores `(batch * choices, 1)` -> `(batch, choices)`, the choice axis read off `like` `(batch, choices, ...)`."""

    def call(self, scores, like):
        return ops.reshape(scores, (-1, ops.shape(like)[1]))

    def compute_output_shape(self, scores_shape, like_shape):
        return (like_shape[0], like_shape[1])
