"""Distribution as configuration: one name picks a `tf.distribute` strategy
(TensorFlow backend) or a `keras.distribution` (JAX backend)."""

import contextlib

import keras

from keras_bert3.distribution.bert_layout_map import bert_layout_map
from keras_bert3.distribution.devices import check_devices
from keras_bert3.distribution.devices import first_devices

TENSORFLOW_STRATEGIES = ("mirrored", "multi_worker_mirrored", "tpu")
JAX_DISTRIBUTIONS = ("data_parallel", "model_parallel")
STRATEGIES = ("none",) + TENSORFLOW_STRATEGIES + JAX_DISTRIBUTIONS


_joined = False


def _join_processes() -> None:
    """On JAX, joins the other processes of a multi-host job once, where `KERAS_DISTRIBUTION_NUM_PROCESSES` > 1
    (`keras.distribution.initialize` reads the job's environment). CPU collectives go through gloo."""
    global _joined
    import os

    if _joined or int(os.environ.get("KERAS_DISTRIBUTION_NUM_PROCESSES", "1")) <= 1:
        return
    import jax

    # CPU collectives only (accelerators keep theirs); set before JAX starts its backends.
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    keras.distribution.initialize()
    _joined = True


def _resolve_devices(devices: list[str] | int | None) -> list[str] | None:
    """A count becomes the first that many accelerators; names are checked to exist."""
    if isinstance(devices, int):
        return first_devices(devices)
    check_devices(devices)
    return devices


@contextlib.contextmanager
def distribution_scope(name: str = "none", *, devices: list[str] | int | None = None, model_parallel_size: int = 2):
    """Builds and trains the model under this context to distribute it; yields the
    number of replicas that split the batch.

    Args:
        name: "none"; on TensorFlow "mirrored" (all local GPUs or CPUs),
            "multi_worker_mirrored" (hosts from `TF_CONFIG`), "tpu"; on JAX
            "data_parallel" (all devices, batch split) or "model_parallel"
            (a ("batch", "model") mesh, weights sharded by `bert_layout_map`).
        devices: the devices to use (default: all local ones), e.g.
            `["/cpu:0", "/cpu:1"]` or `keras.distribution.list_devices()[:4]`;
            or a number: the first that many GPUs or TPUs (CPUs where there are none).
        model_parallel_size: size of the "model" mesh axis for model_parallel.

    Example:
    >>> with distribution_scope("mirrored") as replicas:
    ...     pretrainer = BertPretrainer(BertBackbone.from_size("base"))
    ...     pretrainer.compile()
    >>> pretrainer.fit(dataset)
    """
    if name not in STRATEGIES:
        raise ValueError(f"Unknown strategy {name!r}; choose one of {STRATEGIES}.")
    backend = keras.backend.backend()
    if name in TENSORFLOW_STRATEGIES and backend != "tensorflow":
        raise ValueError(f"Strategy {name!r} is a tf.distribute strategy: run with KERAS_BACKEND=tensorflow.")
    if name in JAX_DISTRIBUTIONS and backend != "jax":
        raise ValueError(f"Strategy {name!r} is a keras.distribution for JAX: run with KERAS_BACKEND=jax.")
    if name == "none":
        yield 1
        return
    if name in TENSORFLOW_STRATEGIES:
        import tensorflow as tf

        devices = _resolve_devices(devices)

        if name == "mirrored":
            strategy = tf.distribute.MirroredStrategy(devices)
        elif name == "multi_worker_mirrored":
            strategy = tf.distribute.MultiWorkerMirroredStrategy()
        else:
            resolver = tf.distribute.cluster_resolver.TPUClusterResolver()
            tf.config.experimental_connect_to_cluster(resolver)
            tf.tpu.experimental.initialize_tpu_system(resolver)
            strategy = tf.distribute.TPUStrategy(resolver)
        with strategy.scope():
            yield strategy.num_replicas_in_sync
        return
    _join_processes()
    devices = _resolve_devices(devices) or keras.distribution.list_devices()
    previous = keras.distribution.distribution()
    if name == "data_parallel":
        distribution = keras.distribution.DataParallel(devices=devices)
        replicas = len(devices)
    else:
        if len(devices) % model_parallel_size:
            raise ValueError(f"model_parallel_size={model_parallel_size} does not divide the {len(devices)} devices.")
        replicas = len(devices) // model_parallel_size
        mesh = keras.distribution.DeviceMesh((replicas, model_parallel_size), ("batch", "model"), devices)
        distribution = keras.distribution.ModelParallel(layout_map=bert_layout_map(mesh), batch_dim_name="batch")
    keras.distribution.set_distribution(distribution)
    try:
        yield replicas
    finally:
        keras.distribution.set_distribution(previous)
