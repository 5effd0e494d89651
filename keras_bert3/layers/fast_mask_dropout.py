"""Dropout with masks from `keras_bert3.ops.dropout`: cheaper, and in bfloat16 the keep rate asked for."""

import keras

from keras_bert3.ops.dropout import dropout


@keras.saving.register_keras_serializable(package="keras_bert3")
class FastMaskDropout(keras.layers.Dropout):
    """`keras.layers.Dropout` (same arguments, seed generator and scaling) with cheaper masks."""

    def call(self, inputs, training=False):
        if not training or self.rate <= 0 or self.rate >= 1 or self.noise_shape is not None:
            return super().call(inputs, training=training)
        return dropout(inputs, self.rate, seed=self.seed_generator)
