"""Tests in this folder need a GPU: marked `gpu`, and skipped (with the devices
the backend does see) where there is none, as in CI.

Run them on a GPU machine, with a report that survives an interrupted run:

    KERAS_BACKEND=jax python -m pytest tests/gpu -rA -s --junitxml=gpu_tests.xml
"""

import os

import pytest

from keras_bert3.distribution.devices import accelerator_type
from keras_bert3.distribution.devices import visible_devices

GPU_TESTS = os.path.dirname(os.path.abspath(__file__))


def pytest_collection_modifyitems(config, items):
    mine = [item for item in items if str(item.fspath).startswith(GPU_TESTS)]
    if not mine:
        return
    skip = None
    if accelerator_type() != "gpu":
        skip = pytest.mark.skip(reason=f"needs a GPU; this backend sees {', '.join(visible_devices())}")
    for item in mine:
        item.add_marker(pytest.mark.gpu)
        if skip is not None:
            item.add_marker(skip)
