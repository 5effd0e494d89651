"""Models whose `compile` takes its own arguments, compiled again when loaded."""

import keras


class CompileOnLoad:
    """A Keras model mixin: loaded from a `.keras` file, the model is compiled as it was saved
    (optimizer, losses, metrics). Keras itself skips models with a custom `compile` and warns."""

    def compile_from_config(self, config):
        config = keras.saving.deserialize_keras_object(config)
        keras.Model.compile(self, **config)  # The arguments our `compile` passed on, as saved.
        if self.built:
            self.optimizer.build(self.trainable_variables)
