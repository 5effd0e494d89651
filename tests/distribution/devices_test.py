"""Precisions and device counts that this machine cannot give are refused with
the devices it has (CI machines have CPUs only)."""

import os
import sys

import keras
import pytest

from keras_bert3.distribution.devices import accelerator_type
from keras_bert3.distribution.devices import check_precision
from keras_bert3.distribution.devices import first_devices
from keras_bert3.distribution.devices import visible_devices
from keras_bert3.distribution.strategy import distribution_scope
from tests import warm_commands

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STRATEGY = {"tensorflow": "mirrored", "jax": "data_parallel"}[keras.backend.backend()]
on_cpu = pytest.mark.skipif(accelerator_type() != "cpu", reason="about machines without a GPU")


@on_cpu
def test_float16_without_a_gpu_is_refused_with_the_devices_there():
    with pytest.raises(ValueError, match=r"'mixed_float16' needs a GPU.*cpu:0.*mixed_bfloat16"):
        check_precision("mixed_float16")
    check_precision("mixed_bfloat16")
    check_precision(None)


def test_more_devices_than_exist_are_refused_by_name():
    count = len([d for d in visible_devices() if d.split(":")[0] == accelerator_type()]) or 1
    with pytest.raises(ValueError, match=rf"{count + 1} devices asked for.*sees {count} .*Ask for at most {count}"):
        first_devices(count + 1)
    with pytest.raises(ValueError, match="Ask for at most"):
        with distribution_scope(STRATEGY, devices=count + 1):
            pass
    with pytest.raises(ValueError, match=r"\['/gpu:7'\] do not exist here"):
        with distribution_scope(STRATEGY, devices=["/gpu:7"]):
            pass
    with distribution_scope(STRATEGY, devices=1) as replicas:
        assert replicas == 1


@on_cpu
@pytest.mark.one_pass
@pytest.mark.slow
def test_pretrain_command_refuses_float16_before_writing_anything(tmp_path):
    completed = warm_commands.run(
        [
            sys.executable,
            "-m",
            "keras_bert3.cli",
            "pretrain",
            "--output",
            str(tmp_path / "run"),
            "--precision",
            "mixed_float16",
            "--steps",
            "1",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 2
    assert "needs a GPU" in completed.stderr and "mixed_bfloat16" in completed.stderr
    assert not (tmp_path / "run").exists()
