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

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SETUPS = {"tensorflow": [("mirrored", 2)], "jax": [("data_parallel", 8), ("model_parallel", 8)]}


def run_steps(preset, out, strategy, devices):
    subprocess.run(
        [sys.executable, "-m", "tests.distribution.one_step", preset, str(out), strategy, str(devices)],
        check=True, cwd=REPO, capture_output=True,
    )  # fmt: skip
    return np.load(out)


@pytest.fixture(scope="module")
def preset(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("preset"))
    keras.utils.set_random_seed(0)
    BertPretrainer(BertBackbone(120, 2, 4, 32, 64, max_sequence_length=16, dropout=0.0)).save_to_preset(path)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("strategy, devices", SETUPS[keras.backend.backend()])
def test_distributed_steps_equal_one_device(tmp_path, preset, strategy, devices):
    single = run_steps(preset, tmp_path / "single.npy", "none", 1)
    distributed = run_steps(preset, tmp_path / "distributed.npy", strategy, devices)
    assert single[0, 1] < single[0, 0]  # The update lowered the loss.
    np.testing.assert_allclose(distributed, single, atol=1e-5, rtol=0)


def test_strategy_of_the_other_backend_is_refused():
    other = "data_parallel" if keras.backend.backend() == "tensorflow" else "mirrored"
    with pytest.raises(ValueError, match="run with KERAS_BACKEND="):
        with distribution_scope(other):
            pass
