"""The precision a training step computes in: `compile(precision="auto")` picks the fastest safe
one for the device (`auto_precision`), and the step alone switches to it (`computing_in`)."""

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
    """What `precision="auto"` trains a float32 model in on `device` (`jit_compile` resolved, not "auto").

    "mixed_bfloat16" on TPUs and GPUs of compute capability 8.0+ (bfloat16 tensor units, float32's range: no loss
    scaling); "mixed_float16" with loss scaling on GPUs of 7.x (float16 units only); "mixed_bfloat16" for pretraining on
    CPUs with AVX512-BF16 or AMX under TensorFlow's graph or JAX's compiled step; "float32" elsewhere.
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
    # Fast under TensorFlow's graph (not its XLA) and JAX's compiled step (eager JAX compiles each op anew).
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
    """The dtype policy a training step should compute in, or None to keep the model's (one built in a
    policy other than "float32" keeps it). "auto": `auto_precision`'s choice, logged once per device."""
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
    """A mixin for Keras models whose `compile` takes `precision`: the training step computes in
    the chosen policy, with loss scaling for float16; everything else keeps the model's policy."""

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
        # Traced once per input signature: only the compiled step computes in the training policy.
        with computing_in(self, self._step_policy):
            return super().train_step(*args, **kwargs)


_SWITCHED = {}  # id(model) -> [entries, the layers switched]
_LOCK = threading.Lock()


@contextlib.contextmanager
def computing_in(model: keras.layers.Layer, policy: str | None):
    """Within the block, every float32 layer of `model` computes in `policy` (weights stay float32);
    each gets float32 back when the last block open on `model` ends (a `tf.distribute` strategy traces
    its replicas' steps in threads that overlap)."""
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
