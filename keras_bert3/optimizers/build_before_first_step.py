"""Builds a model's optimizer before its first training step is traced: on TensorFlow without a
strategy, Keras creates its variables inside the first step, which `tf.function` then traces twice."""

import keras

from keras_bert3.upstream.multi_worker_fit import model_strategy


def build_optimizer_before_first_step(model: keras.Model) -> None:
    """Creates `model.optimizer`'s variables now; nothing on JAX, under a strategy, or when built."""
    optimizer = getattr(model, "optimizer", None)
    if keras.backend.backend() != "tensorflow" or optimizer is None or optimizer.built:
        return
    if model_strategy(model) is not None:
        return
    optimizer.build(model.trainable_variables)
