"""Compiles a model's JAX training step for several batch shapes (length buckets) at once, in threads,
when `fit` starts, into JAX's persistent compilation cache. Lowered from the state Keras' JAX trainer
uses, it is the same program as `fit`'s own, which the cache then answers."""

import concurrent.futures
import warnings

import keras


class PrecompileTrainSteps(keras.callbacks.Callback):
    """Compiles `model.train_step` for each of `batch_specs` (nested `KerasTensor`s of
    `(x, y[, sample_weight])`) in parallel when training begins; a failure is a warning. Does nothing
    off JAX, without a persistent cache, under a `keras.distribution`, or when steps run eagerly."""

    def __init__(self, batch_specs: list):
        super().__init__()
        self.batch_specs = batch_specs
        self.compiled = 0

    def on_train_begin(self, logs=None):
        try:
            self.compiled = precompile_train_steps(self.model, self.batch_specs)
        except Exception as error:  # An optimisation only: training goes on without it.
            warnings.warn(
                f"keras_bert3: training steps not compiled ahead ({type(error).__name__}: {error}); "
                "each compiles at its first batch instead.",
                stacklevel=2,
            )


def precompile_train_steps(model: keras.Model, batch_specs: list) -> int:
    """Compiles `model.train_step` for each of `batch_specs` side by side into the cache; returns how
    many programs it compiled (0 where it does nothing). The model, optimizer and metrics must be built."""
    if keras.backend.backend() != "jax" or not batch_specs or model.run_eagerly or not model.jit_compile:
        return 0
    import jax

    if not jax.config.jax_compilation_cache_dir or keras.distribution.distribution() is not None:
        return 0

    def abstract(values):
        return [jax.ShapeDtypeStruct(value.shape, value.dtype) for value in values]

    state = (
        abstract(model.trainable_variables),
        abstract(model.non_trainable_variables),
        abstract(model.optimizer.variables),
        abstract(model.metrics_variables),
    )
    step = jax.jit(model.train_step, donate_argnums=0)
    # Tracing holds Python's lock: one at a time. Compiling does not.
    lowered = [
        step.lower(state, jax.tree.map(lambda spec: jax.ShapeDtypeStruct(spec.shape, spec.dtype), batch))
        for batch in batch_specs
    ]
    with concurrent.futures.ThreadPoolExecutor(len(lowered)) as pool:
        list(pool.map(lambda program: program.compile(), lowered))
    return len(lowered)
