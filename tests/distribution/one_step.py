"""Runs two training steps of a saved pretrainer under each of some
distributions and saves their losses:
`python -m tests.distribution.one_step PRESET OUT STRATEGIES DEVICES`,
STRATEGIES comma-separated (e.g. `none,data_parallel,model_parallel`), OUT an
`.npz` with one array of losses per strategy.

Run in a fresh process: the number of (virtual) devices is fixed at start-up.
"none" runs on one of them (the first). For "multi_worker_mirrored" each
worker process runs this with its TF_CONFIG; DEVICES is then the number of
workers.
"""

import os
import sys

preset, out, strategies, devices = sys.argv[1], sys.argv[2], sys.argv[3].split(","), int(sys.argv[4])
if os.environ.get("KERAS_BACKEND") == "jax":
    os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={devices}"

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

if os.environ.get("KERAS_BACKEND") == "tensorflow" and devices > 1 and "mirrored" in strategies:
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * devices)

from keras_bert3.distribution import distribution_scope  # noqa: E402
from keras_bert3.models.bert_pretrainer import BertPretrainer  # noqa: E402
from tests.models.bert_pretrainer_test import pretraining_batch  # noqa: E402


def two_steps(strategy):
    """The loss, MLM loss and NSP loss of two steps on two global batches of 8."""
    device_names = [f"/cpu:{i}" for i in range(devices)] if strategy == "mirrored" else None
    with distribution_scope(strategy, devices=device_names) as replicas:
        pretrainer = BertPretrainer.from_preset(preset)
        pretrainer.compile(
            learning_rate=1e-4, total_steps=10, warmup_steps=0, precision="float32"
        )  # The recipe: clipping included.
        # Unequal padding and mask weights across the batches' halves (each
        # half goes to another replica).
        batches = []
        for step in range(2):
            halves = [pretraining_batch(batch=4, seed=2 * step + s) for s in (0, 1)]
            batches.append(tf.nest.map_structure(lambda a, b: np.concatenate([a, b]), *halves))
        dataset = tf.data.Dataset.from_tensors(batches[0]).concatenate(tf.data.Dataset.from_tensors(batches[1]))
        history = pretrainer.fit(dataset, epochs=2, steps_per_epoch=1, verbose=0).history
    print(strategy, "replicas", replicas, history["loss"])
    return np.array([history["loss"], history["mlm_loss"], history["nsp_loss"]], dtype="float64")


np.savez(out, **{strategy: two_steps(strategy) for strategy in strategies})
