"""The precision a pretraining step computes in: `compile(precision="auto")`
picks bfloat16 where the hardware computes it natively and the step's
kernels are faster for it, float32 elsewhere.

Measured by `bench/bench_pretraining.py` on a CPU with AVX512-BF16: TensorFlow's
graph (oneDNN) and JAX's XLA train faster in `mixed_bfloat16` than in float32;
TensorFlow's XLA on a CPU trains slower in it.
"""

import contextlib
import threading

import keras

from keras_bert3.distribution.devices import accelerator_type
from keras_bert3.distribution.devices import cpu_has_native_bfloat16
from keras_bert3.upstream.layer_tree import all_layers

PRECISIONS = ("auto", "float32", "mixed_bfloat16")


def check_precision_name(precision: str) -> None:
    """Raises a ValueError naming the choices if `precision` is not one of `PRECISIONS`."""
    if precision not in PRECISIONS:
        raise ValueError(
            f"precision={precision!r} is not one of {PRECISIONS}. For float16 (GPUs only) build the "
            "model under keras.config.set_dtype_policy('mixed_float16') and leave precision='auto'."
        )


def training_dtype_policy(precision: str, model_policy: str, jit_compile: bool) -> str | None:
    """The dtype policy a training step should compute in, or None to keep the model's.

    Args:
        precision: "auto", "float32" or "mixed_bfloat16".
        model_policy: the name of the model's dtype policy. A model built in
            any policy other than "float32" keeps it under "auto" (its
            builder chose).
        jit_compile: whether the step is compiled with XLA (resolved, not "auto").

    "auto" gives "mixed_bfloat16" (bfloat16 compute, float32 weights) on
    TPUs, and on CPUs with AVX512-BF16 or AMX for TensorFlow's graph and for
    JAX's compiled step; float32 on GPUs (choose `mixed_float16` or `mixed_bfloat16` there with
    `keras.config.set_dtype_policy`) and everywhere else.

    Example:
    >>> training_dtype_policy("auto", "float32", jit_compile=False)  # TensorFlow, AVX512-BF16 CPU.
    'mixed_bfloat16'
    """
    check_precision_name(precision)
    if model_policy != "float32":
        if precision == "mixed_bfloat16" and model_policy != "mixed_bfloat16":
            raise ValueError(
                f"precision='mixed_bfloat16' asks to train a {model_policy} model in bfloat16: build "
                "the model in float32, or leave precision='auto' to train in its own policy."
            )
        return None
    if precision != "auto":
        return None if precision == "float32" else precision
    device = accelerator_type()
    if device == "tpu":
        return "mixed_bfloat16"
    # bfloat16 is fast in TensorFlow's graph (oneDNN) and in JAX's XLA, not in
    # TensorFlow's XLA on CPUs, and eager JAX would compile each bfloat16 op anew.
    fast_on_this_cpu = jit_compile if keras.backend.backend() == "jax" else not jit_compile
    if device == "cpu" and cpu_has_native_bfloat16() and fast_on_this_cpu:
        return "mixed_bfloat16"
    return None


_SWITCHED = {}  # id(model) -> [entries, the layers switched]
_LOCK = threading.Lock()


@contextlib.contextmanager
def computing_in(model: keras.layers.Layer, policy: str | None):
    """Within the block, every float32 layer of `model` computes in `policy`
    (weights stay float32); each gets float32 back when the last block open
    on `model` ends (a `tf.distribute` strategy traces its replicas' steps in
    threads that overlap). Used while a training step is traced, so that
    evaluation, prediction and saving keep the model's policy.

    Example:
    >>> with computing_in(pretrainer, "mixed_bfloat16"):
    ...     logs = keras.Model.train_step(pretrainer, batch)
    """
    if policy is None:
        yield
        return
    with _LOCK:
        entry = _SWITCHED.setdefault(id(model), [0, []])
        if entry[0] == 0:
            entry[1] = [layer for layer in all_layers(model) if layer.dtype_policy.name == "float32"]
            for layer in entry[1]:
                layer.dtype_policy = policy
        entry[0] += 1
    try:
        yield
    finally:
        with _LOCK:
            entry[0] -= 1
            if entry[0] == 0:
                for layer in _SWITCHED.pop(id(model))[1]:
                    layer.dtype_policy = "float32"
