"""The devices the current Keras backend can use, and checks that a requested
precision or device list fits them, with errors that name what is there."""

import dataclasses
import functools
import warnings

import keras

ACCELERATOR_TYPES = ("gpu", "tpu")


def visible_devices() -> list[str]:
    """The current backend's devices, accelerators first, as lowercase names
    (`["gpu:0", "cpu:0"]`): this process's on TensorFlow, every process's on JAX."""
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        names = [device.name.split("device:")[-1].lower() for device in tf.config.list_logical_devices()]
    else:
        import jax

        names = [f"{device.platform}:{device.id}" for device in jax.devices()]
        if jax.default_backend() != "cpu":
            names += [f"cpu:{device.id}" for device in jax.local_devices(backend="cpu")]
    return sorted(set(names), key=lambda name: (name.startswith("cpu"), name))


def accelerator_type() -> str:
    """`"gpu"`, `"tpu"` or `"cpu"`: what the current backend computes on by default."""
    for name in visible_devices():
        kind = name.split(":")[0]
        if kind in ("gpu", "cuda", "rocm"):
            return "gpu"
        if kind == "tpu":
            return "tpu"
    return "cpu"


@functools.cache
def onednn_enabled() -> bool:
    """Whether TensorFlow runs its CPU ops on oneDNN (when: `upstream/onednn_flag.py`)."""
    from keras_bert3.upstream.onednn_flag import tensorflow_uses_onednn

    return tensorflow_uses_onednn()


@dataclasses.dataclass(frozen=True)
class DeviceDescription:
    """What a precision choice needs to know of the device a backend computes on
    (`cpu_bfloat16`: whether a CPU computes bfloat16 in hardware; None: unknown)."""

    platform: str
    name: str = ""
    compute_capability: tuple[int, int] | None = None
    cpu_bfloat16: bool | None = None


def current_device() -> DeviceDescription:
    """The `DeviceDescription` of the device the current backend computes on by default."""
    platform = accelerator_type()
    if platform == "cpu":
        return DeviceDescription("cpu", "CPU", cpu_bfloat16=cpu_has_native_bfloat16())
    name, capability = platform.upper(), None
    if keras.backend.backend() == "jax":
        import jax

        device = jax.devices()[0]
        name = device.device_kind
        if getattr(device, "compute_capability", None):  # CUDA GPUs: "9.0".
            capability = tuple(int(part) for part in str(device.compute_capability).split(".")[:2])
    elif platform == "gpu":
        import tensorflow as tf

        details = tf.config.experimental.get_device_details(tf.config.list_physical_devices("GPU")[0])
        name = details.get("device_name", name)
        capability = details.get("compute_capability")
    return DeviceDescription(platform, name, compute_capability=tuple(capability) if capability else None)


def check_precision(precision: str | None) -> None:
    """Refuses `mixed_float16` without a GPU (CPUs and TPUs compute bfloat16 natively)."""
    if precision in (None, "float32", "mixed_bfloat16", "bfloat16"):
        return
    if precision in ("mixed_float16", "float16") and accelerator_type() != "gpu":
        raise ValueError(
            f"precision {precision!r} needs a GPU, and {keras.backend.backend()} sees only "
            f"{', '.join(visible_devices())}. Use 'mixed_bfloat16' (native on CPUs with AVX512-BF16 "
            "or AMX, and on TPUs) or float32 (no precision) here."
        )


def cpu_has_native_bfloat16() -> bool | None:
    """Whether this CPU has AVX512-BF16 or AMX-BF16, which oneDNN uses; None where
    /proc/cpuinfo cannot be read (not Linux)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), None)
    except OSError:
        return None
    if flags is None:
        return None
    return "avx512_bf16" in flags or "amx_bf16" in flags


def check_training_settings(precision: str | None, jit_compile) -> None:
    """Refuses a precision this machine cannot run (`check_precision`); warns of
    bfloat16 on a CPU that emulates it, and of eager execution on JAX."""
    check_precision(precision)
    if (
        precision in ("mixed_bfloat16", "bfloat16")
        and accelerator_type() == "cpu"
        and cpu_has_native_bfloat16() is False
    ):
        warnings.warn(
            f"precision {precision!r} on a CPU without bfloat16 instructions (AVX512-BF16 or AMX): every "
            "bfloat16 operation is emulated through float32 conversions and runs slower than float32. "
            "Use float32 here (keras.config.set_dtype_policy('float32')).",
            stacklevel=3,
        )
    if jit_compile is False and keras.backend.backend() == "jax":
        warnings.warn(
            "jit_compile=False on JAX runs the training step eagerly, one operation at a time: 3 to 5 "
            "times slower than the compiled step (BERT mini on a CPU). Leave jit_compile='auto' (compiled) "
            "unless you are debugging.",
            stacklevel=3,
        )


def check_devices(devices: list[str] | None) -> None:
    """Refuses a device list that names devices the backend does not have."""
    if not devices:
        return
    available = visible_devices()
    aliases = {"cuda": "gpu", "rocm": "gpu"}

    def normalized(name) -> str:
        name = str(name).lower().split("device:")[-1].lstrip("/")
        kind, _, index = name.partition(":")
        # JAX device objects print as e.g. "CudaDevice(id=0)".
        if "device(id=" in name:
            kind, index = name.split("device(id=")[0], name.split("=")[-1].rstrip(")")
        return f"{aliases.get(kind, kind)}:{index or 0}"

    known = {normalized(name) for name in available}
    missing = [str(name) for name in devices if normalized(name) not in known]
    if missing:
        raise ValueError(
            f"{len(devices)} devices asked for, but {missing} do not exist here: "
            f"{keras.backend.backend()} sees {len(available)} ({', '.join(available)}). "
            "Name only these, or run on a machine with more."
        )


def first_devices(count: int) -> list[str]:
    """The first `count` GPUs or TPUs (CPUs where there is none), named as
    `distribution_scope(..., devices=...)` takes them."""
    kind = accelerator_type()
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        names = [device.name for device in tf.config.list_logical_devices(kind.upper())]
    else:
        names = keras.distribution.list_devices()
    if not 1 <= count <= len(names):
        raise ValueError(
            f"{count} devices asked for, but {keras.backend.backend()} sees {len(names)} "
            f"{kind.upper()} device(s) here ({', '.join(visible_devices())}). Ask for at most {len(names)}."
        )
    return names[:count]
