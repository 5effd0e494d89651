"""Builds a model's optimizer before its first training step is traced.

On TensorFlow without a distribution strategy, Keras creates the optimizer's
variables (AdamW's moments) inside the first traced step, and `tf.function`
then traces the whole step twice: once creating variables, once without.
Building them eagerly first halves that work (the encoder is traced once
instead of twice).
"""

import keras

from keras_bert3.upstream.multi_worker_fit import model_strategy


def build_optimizer_before_first_step(model: keras.Model) -> None:
    """Creates `model.optimizer`'s variables now, when Keras would create them while tracing.

    Does nothing on JAX (Keras builds the optimizer before tracing there),
    under a TensorFlow strategy (Keras builds it in the strategy's scope), or
    when the optimizer is already built.
    """
    optimizer = getattr(model, "optimizer", None)
    if keras.backend.backend() != "tensorflow" or optimizer is None or optimizer.built:
        return
    if model_strategy(model) is not None:
        return
    optimizer.build(model.trainable_variables)
