"""Fine-tunes a question answerer on one device, then under a strategy over two virtual CPU devices, in a fresh
process (the number of devices is fixed when the backend starts):
`python -m tests.jobs.finetune_on_devices PRESET TRAIN OUTPUT STRATEGY`; the runs' presets are OUTPUT/none and
OUTPUT/STRATEGY."""

import os
import sys

preset, train, output, strategy = sys.argv[1:5]
if os.environ.get("KERAS_BACKEND") == "jax":
    os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=2"
else:
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

from keras_bert3.cli import main  # noqa: E402

common = ["finetune", "--task", "question-answerer", "--preset", preset, "--train", train, "--epochs", "2"]
common += ["--batch-size", "8", "--sequence-length", "64", "--learning-rate", "1e-3", "--verbose", "0"]
for name, flags in (("none", []), (strategy, ["--strategy", strategy, "--devices", "2"])):
    code = main([*common, "--output", os.path.join(output, name), *flags])
    if code:
        sys.exit(code)
