"""TensorFlow and JAX give the same outputs for the same weights.

The backend is fixed per process, so the other backend runs in a subprocess on
the same saved preset and inputs."""

import os
import sys

import keras
import numpy as np
import pytest

from keras_bert3.models.bert_backbone import BertBackbone
from tests import warm_commands

RUN_OTHER_BACKEND = """
import sys, numpy as np
from keras_bert3.models.bert_backbone import BertBackbone
preset, inputs_path, outputs_path = sys.argv[1:]
inputs = dict(np.load(inputs_path))
outputs = BertBackbone.from_preset(preset).predict(inputs, verbose=0)
np.savez(outputs_path, **outputs)
"""


@pytest.mark.both_backends
@pytest.mark.slow
def test_tensorflow_and_jax_agree(tmp_path, minilm_dir):
    here, other = keras.backend.backend(), {"tensorflow": "jax", "jax": "tensorflow"}[keras.backend.backend()]
    backbone = BertBackbone.from_preset(minilm_dir)
    rng = np.random.default_rng(7)
    lengths = np.array([40, 25, 9, 1])
    mask = (np.arange(40)[None, :] < lengths[:, None]).astype("int32")
    inputs = {
        "token_ids": (rng.integers(1000, 30000, (4, 40)) * mask).astype("int32"),
        "segment_ids": (np.arange(40)[None, :] >= 20).astype("int32").repeat(4, 0) * mask,
        "padding_mask": mask,
    }
    np.savez(tmp_path / "inputs.npz", **inputs)
    env = dict(os.environ, KERAS_BACKEND=other)
    warm_commands.run(
        [sys.executable, "-c", RUN_OTHER_BACKEND, minilm_dir, str(tmp_path / "inputs.npz"), str(tmp_path / "out.npz")],
        check=True,
        env=env,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    )
    theirs = np.load(tmp_path / "out.npz")
    ours = backbone.predict(inputs, verbose=0)
    assert here != other
    for key in ("sequence_output", "pooled_output"):
        assert np.max(np.abs(ours[key] - theirs[key])) < 1e-5, key
