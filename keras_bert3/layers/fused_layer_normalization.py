"""A LayerNorm layer computing through `keras_bert3.ops.layer_norm`."""

import keras

from keras_bert3.ops.layer_norm import layer_norm


@keras.saving.register_keras_serializable(package="keras_bert3")
class FusedLayerNormalization(keras.layers.LayerNormalization):
    """`keras.layers.LayerNormalization` computing through `layer_norm` over the last axis: the same
    weights, configuration and values; at inference on TensorFlow one fused oneDNN kernel."""

    def call(self, inputs, training=None):
        last_axis_only = list(self.axis) in ([-1], [len(inputs.shape) - 1])
        if not last_axis_only or self.rms_scaling or not (self.center and self.scale):
            return super().call(inputs)
        return layer_norm(inputs, self.gamma, self.beta, self.epsilon, training=training)
