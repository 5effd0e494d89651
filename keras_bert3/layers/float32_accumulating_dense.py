"""A dense layer whose bfloat16 products accumulate in float32 on JAX, forward and backward (`ops.dense_product`)."""

import keras

from keras_bert3.ops.dense_product import dense_product


@keras.saving.register_keras_serializable(package="keras_bert3")
class Float32AccumulatingDense(keras.layers.Dense):
    """`keras.layers.Dense` computing through `dense_product` (same weights, config, LoRA); quantized,
    it computes as a quantized `Dense` does."""

    def call(self, inputs, training=None):
        x = dense_product(inputs, self.kernel, self.bias)
        return self.activation(x) if self.activation is not None else x

    def quantize(self, mode=None, type_check=True, config=None):
        # Keras refuses to quantize subclasses of Dense unless told; quantized, Dense's own call runs.
        super().quantize(mode, type_check=False, config=config)
