"""Compiles a model's JAX training step for several batch shapes at once, when
`fit` starts, into JAX's persistent compilation cache; each first step of a
shape then finds its program there instead of compiling it.

XLA compiles one program per input shape. A fine-tuning `fit` with several
length buckets (`keras_bert3.preprocessing.fixed_shapes`; one by default on
GPUs and TPUs) meets each in its first epoch and would compile them one after
another, each for many seconds on a GPU. Compiled side by side in threads (XLA
compiles outside Python's lock) they end sooner, though not in the time of
the slowest: each slows the others, as XLA's GPU compiler already uses
several of the host's cores.

How: Keras' JAX trainer compiles `jax.jit(model.train_step, donate_argnums=0)`
and calls it with the state `(trainable, non_trainable, optimizer, metrics)`
variables and one batch, as Keras documents for a custom JAX `train_step`.
Lowered here for each batch shape from the same state, it is the same program,
so the persistent cache (keyed by the program) answers `fit`'s own compilation.
It runs in `on_train_begin`, after `fit` has built the model, optimizer and
metrics and before its first step.
"""

import concurrent.futures
import warnings

import keras


class PrecompileTrainSteps(keras.callbacks.Callback):
    """Compiles `model.train_step` for each batch of `batch_specs` (nested
    `KerasTensor`s of `(x, y[, sample_weight])`, as the dataset yields them)
    in parallel when training begins.

    Does nothing off JAX, without a persistent compilation cache, under a
    `keras.distribution` (its steps carry shardings), or when steps run
    eagerly. A failure is a warning: the steps then compile as they come.
    """

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
    """Compiles `model.train_step` for each of `batch_specs` side by side, into
    JAX's persistent compilation cache; returns how many programs it compiled
    (0 where it does nothing: see `PrecompileTrainSteps`). The model, its
    optimizer and its compiled metrics must be built (as `fit` builds them
    before `on_train_begin`)."""
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
