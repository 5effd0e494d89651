"""`fit` and `evaluate` under `MultiWorkerMirroredStrategy` with several workers (keras-team/keras#20585): Keras'
TensorFlow trainer builds the model from a batch that `strategy.reduce` cannot reduce across workers (a dict), and
reduces each replica's logs on axis 0, which fails on scalars.

Private APIs: `Model._maybe_symbolic_build(iterator, data_batch)` and `Model._distribute_strategy` (Keras' TensorFlow
trainer), and `StrategyExtended._in_multi_worker_mode()` (TensorFlow)."""

import keras
from keras import ops

from keras_bert3.upstream.private_api import require_private

_WHY = "fit under MultiWorkerMirroredStrategy, keras-team/keras#20585"
if keras.backend.backend() == "tensorflow":
    import tensorflow as tf

    require_private(keras.Model, "_maybe_symbolic_build", package=keras, why=_WHY)
    require_private(tf.distribute.StrategyExtended, "_in_multi_worker_mode", package=tf, why=_WHY)


def model_strategy(model: keras.Model):
    """The `tf.distribute` strategy `model` was created under, or None; Keras'
    public `distribute_strategy` falls back to the current scope's."""
    return getattr(model, "_distribute_strategy", None)


def in_multi_worker_mode(model: keras.Model) -> bool:
    """True when `model` trains under a `MultiWorkerMirroredStrategy` of more than one worker."""
    extended = getattr(model_strategy(model), "extended", None)
    return bool(extended is not None and getattr(extended, "_in_multi_worker_mode", lambda: False)())


class MultiWorkerFit:
    """A `keras.Model` mixin: `fit` and `evaluate` that run under `MultiWorkerMirroredStrategy`."""

    def _maybe_symbolic_build(self, iterator=None, data_batch=None):
        # The build needs only shapes and dtypes: this worker's first replica's part of the batch.
        strategy = model_strategy(self)
        if iterator is not None and strategy is not None:
            for _, _, batches in iterator:
                batch = next(batches)
                data_batch = keras.tree.map_structure(
                    lambda value: strategy.experimental_local_results(value)[0], batch
                )
                break
            iterator = None
        return super()._maybe_symbolic_build(iterator=iterator, data_batch=data_batch)

    def train_step(self, *args, **kwargs):
        return self._reducible_across_workers(super().train_step(*args, **kwargs))

    def test_step(self, *args, **kwargs):
        return self._reducible_across_workers(super().test_step(*args, **kwargs))

    def _reducible_across_workers(self, logs):
        # Scalars get a length-1 axis, which Keras' reduction accepts (JAX steps, returning state too, pass unchanged).
        if not in_multi_worker_mode(self):
            return logs
        return {name: ops.reshape(value, (1,)) for name, value in logs.items()}
