"""Imports of the reference implementations (torch, transformers, ...).

With KERAS_BERT3_REQUIRE_REFERENCE=1 (set by the README's test command and CI)
a missing reference is an error, so parity tests can never be skipped there;
otherwise the tests that need it are skipped.
"""

import importlib
import os

import pytest


def import_reference(name: str):
    if os.environ.get("KERAS_BERT3_REQUIRE_REFERENCE") == "1":
        return importlib.import_module(name)
    return pytest.importorskip(name)
