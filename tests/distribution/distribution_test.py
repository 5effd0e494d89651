"""Each distribution gives the same losses as one device on the same global
batch, after one step and after the update (within 1e-5)."""

import os
import subprocess
import sys

import keras
import numpy as np
import pytest

from keras_bert3.distribution import distribution_scope
from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.bert_pretrainer import BertPretrainer
from tests import warm_commands

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Each backend's strategies and the devices they run on, all in one process
# with one device's run ("none"), the reference of every test here.
SETUPS = {"tensorflow": (["mirrored"], 2), "jax": (["data_parallel", "model_parallel"], 8)}
STRATEGIES, DEVICES = SETUPS[keras.backend.backend()]


def run_steps(preset, out, strategies, devices):
    """The losses of two steps under each of `strategies`, run in a fresh process."""
    warm_commands.run(
        [sys.executable, "-m", "tests.distribution.one_step", preset, str(out), ",".join(strategies), str(devices)],
        check=True,
        cwd=REPO,
        capture_output=True,
    )
    return dict(np.load(out))


@pytest.fixture(scope="module")
def preset(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("preset"))
    keras.utils.set_random_seed(0)
    BertPretrainer(BertBackbone(120, 2, 4, 32, 64, max_sequence_length=16, dropout=0.0)).save_to_preset(path)
    return path


@pytest.fixture(scope="module")
def losses(preset, tmp_path_factory):
    """The losses of one device and of each of this backend's strategies."""
    return run_steps(preset, tmp_path_factory.mktemp("losses") / "losses.npz", ["none", *STRATEGIES], DEVICES)


@pytest.fixture(scope="module")
def single(losses):
    return losses["none"]


@pytest.mark.slow
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_distributed_steps_equal_one_device(losses, strategy):
    np.testing.assert_allclose(losses[strategy], losses["none"], atol=1e-5, rtol=0)


def test_strategy_of_the_other_backend_is_refused():
    other = "data_parallel" if keras.backend.backend() == "tensorflow" else "mirrored"
    with pytest.raises(ValueError, match="run with KERAS_BACKEND="):
        with distribution_scope(other):
            pass


def free_port():
    import socket

    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def run_two_processes(tmp_path, preset, strategy, devices, environments):
    """Runs `one_step` in two processes at once, one environment each; returns their losses."""
    processes = []
    for index, environment in enumerate(environments):
        out = tmp_path / f"process{index}.npz"
        processes.append(
            warm_commands.Popen(
                [sys.executable, "-m", "tests.distribution.one_step", preset, str(out), strategy, str(devices)],
                cwd=REPO,
                env=dict(os.environ, **environment),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        )
    for process in processes:
        _, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stderr.decode()[-3000:]
    return [np.load(tmp_path / f"process{index}.npz")[strategy] for index in range(len(environments))]


@pytest.mark.slow
@pytest.mark.skipif(
    keras.backend.backend() != "tensorflow", reason="a tf.distribute strategy: runs in the TensorFlow pass"
)
def test_multi_worker_mirrored_with_two_processes_equals_one_device(tmp_path, preset, single):
    import json

    workers = [f"localhost:{free_port()}", f"localhost:{free_port()}"]
    environments = [
        {
            "KERAS_BACKEND": "tensorflow",
            "TF_CONFIG": json.dumps({"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}),
        }
        for index in range(2)
    ]
    for losses in run_two_processes(tmp_path, preset, "multi_worker_mirrored", 2, environments):
        np.testing.assert_allclose(losses, single, atol=1e-5, rtol=0)


@pytest.mark.slow
@pytest.mark.skipif(
    keras.backend.backend() != "jax", reason="keras.distribution across processes: runs in the JAX pass"
)
def test_jax_data_parallel_across_two_processes_equals_one_device(tmp_path, preset, single):
    address = f"localhost:{free_port()}"
    environments = [
        {
            "KERAS_BACKEND": "jax",
            "KERAS_DISTRIBUTION_JOB_ADDRESSES": address,
            "KERAS_DISTRIBUTION_NUM_PROCESSES": "2",
            "KERAS_DISTRIBUTION_PROCESS_ID": str(index),
        }
        for index in range(2)
    ]
    for losses in run_two_processes(tmp_path, preset, "data_parallel", 1, environments):
        np.testing.assert_allclose(losses, single, atol=1e-5, rtol=0)
