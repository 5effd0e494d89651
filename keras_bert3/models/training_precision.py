"""The precision a training step computes in: `compile(precision="auto")`
picks the fastest safe one for the device at hand (`auto_precision`), and the
step alone switches to it (`computing_in`); evaluation, prediction and saved
models keep the model's own policy.

Why these choices: NVIDIA GPUs of compute capability 8.0 and later (A100, H100,
H200, L4) and TPUs run bfloat16 matrix products on their tensor units at
several times the float32 rate, and bfloat16 keeps float32's range, so no loss
scaling is needed. Older GPUs with tensor cores (7.x: V100, T4) have float16
but not bfloat16 units, so they train in `mixed_float16` with dynamic loss
scaling. On CPUs with AVX512-BF16 or AMX, pretraining is faster in bfloat16
under TensorFlow's graph (oneDNN) and JAX's compiled step, not under
TensorFlow's XLA; fine-tuning on CPUs stays float32.
"""

import contextlib
import logging
import threading

import keras

from keras_bert3.distribution.devices import DeviceDescription
from keras_bert3.distribution.devices import check_training_settings
from keras_bert3.distribution.devices import current_device
from keras_bert3.upstream.layer_tree import all_layers

LOGGER = logging.getLogger(__name__)

PRECISIONS = ("auto", "float32", "mixed_bfloat16", "mixed_float16")


def check_precision_name(precision: str) -> None:
    """Raises a ValueError naming the choices if `precision` is not one of `PRECISIONS`."""
    if precision not in PRECISIONS:
        raise ValueError(
            f"precision={precision!r} is not one of {PRECISIONS}. 'auto' picks the fastest safe one for "
            "this device; 'float32' turns mixed precision off."
        )


def auto_precision(device: DeviceDescription, *, backend: str, jit_compile: bool, pretraining: bool) -> str:
    """What `precision="auto"` trains a float32 model in on `device`.

    Args:
        device: the device the step runs on (`current_device()`).
        backend: "tensorflow" or "jax".
        jit_compile: whether the step is compiled with XLA (resolved, not "auto").
        pretraining: True for `BertPretrainer`; tasks (fine-tuning) keep
            float32 on CPUs.

    Returns:
        "mixed_bfloat16" on TPUs and on GPUs of compute capability 8.0 or
        later; "mixed_float16" (with loss scaling) on GPUs of 7.x;
        "mixed_bfloat16" for pretraining on CPUs with AVX512-BF16 or AMX under
        TensorFlow's graph or JAX's compiled step; "float32" elsewhere (older
        or unknown GPUs, other CPUs).
    """
    if device.platform == "tpu":
        return "mixed_bfloat16"
    if device.platform == "gpu":
        capability = device.compute_capability
        if capability is not None and tuple(capability) >= (8, 0):
            return "mixed_bfloat16"
        if capability is not None and tuple(capability) >= (7, 0):
            return "mixed_float16"
        return "float32"
    # bfloat16 is fast in TensorFlow's graph (oneDNN) and in JAX's XLA, not in
    # TensorFlow's XLA on CPUs, and eager JAX would compile each bfloat16 op anew.
    fast_here = jit_compile if backend == "jax" else not jit_compile
    if pretraining and device.cpu_bfloat16 and fast_here:
        return "mixed_bfloat16"
    return "float32"


_ANNOUNCED = set()


def training_dtype_policy(
    precision: str,
    model_policy: str,
    jit_compile: bool,
    *,
    pretraining: bool = True,
    device: DeviceDescription | None = None,
) -> str | None:
    """The dtype policy a training step should compute in, or None to keep the model's.

    Args:
        precision: one of `PRECISIONS`.
        model_policy: the name of the model's dtype policy. A model built in
            any policy other than "float32" keeps it under "auto" (its
            builder chose).
        jit_compile: whether the step is compiled with XLA (resolved, not "auto").
        pretraining: see `auto_precision`.
        device: the device (default: `current_device()`).

    "auto" gives `auto_precision`'s choice, logged once per process and
    device (INFO, the `keras_bert3` logger) when it is not float32.
    """
    check_precision_name(precision)
    if model_policy != "float32":
        if precision.startswith("mixed") and model_policy != precision:
            raise ValueError(
                f"precision={precision!r} asks to train a {model_policy} model in another precision: build "
                "the model in float32, or leave precision='auto' to train in its own policy."
            )
        return None
    if precision != "auto":
        return None if precision == "float32" else precision
    device = device or current_device()
    chosen = auto_precision(device, backend=keras.backend.backend(), jit_compile=jit_compile, pretraining=pretraining)
    if chosen == "float32":
        return None
    if (chosen, device) not in _ANNOUNCED:
        _ANNOUNCED.add((chosen, device))
        capability = (
            f", compute capability {'.'.join(map(str, device.compute_capability))}" if device.compute_capability else ""
        )
        LOGGER.info(
            f"keras_bert3: precision='auto' trains in {chosen} on {device.name or device.platform}{capability} "
            "(weights stay float32); compile(precision='float32') trains in float32."
        )
    return chosen


class ChoosesTrainingPrecision:
    """A mixin for Keras models whose `compile` takes `precision`: the
    training step computes in the chosen policy (`training_dtype_policy`),
    with loss scaling for float16; everything else keeps the model's policy.
    """

    _step_policy = None

    def choose_training_precision(self, precision: str, *, pretraining: bool, jit_compile) -> None:
        """After Keras' `compile`: chooses the step's policy and checks it fits
        this machine; float16 wraps the optimizer in Keras' `LossScaleOptimizer`."""
        self._step_policy = training_dtype_policy(
            precision, self.backbone.dtype_policy.name, bool(self.jit_compile), pretraining=pretraining
        )
        check_training_settings(self.training_dtype_policy, jit_compile)
        if self._step_policy == "mixed_float16" and not isinstance(self.optimizer, keras.optimizers.LossScaleOptimizer):
            self.optimizer = keras.optimizers.LossScaleOptimizer(self.optimizer)

    @property
    def training_dtype_policy(self) -> str:
        """The dtype policy the training step computes in (see `compile`)."""
        return self._step_policy or self.backbone.dtype_policy.name

    def train_step(self, *args, **kwargs):
        # Traced once per input signature: the compiled step computes in the
        # training policy, everything else keeps the model's.
        with computing_in(self, self._step_policy):
            return super().train_step(*args, **kwargs)


_SWITCHED = {}  # id(model) -> [entries, the layers switched]
_LOCK = threading.Lock()


@contextlib.contextmanager
def computing_in(model: keras.layers.Layer, policy: str | None):
    """Within the block, every float32 layer of `model` computes in `policy`
    (weights stay float32); each gets float32 back when the last block open
    on `model` ends (a `tf.distribute` strategy traces its replicas' steps in
    threads that overlap). Used while a training step is traced, so that
    evaluation, prediction and saving keep the model's policy.
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
