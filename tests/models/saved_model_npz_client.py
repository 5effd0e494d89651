"""Calls a SavedModel's signatures in a fresh Python process that imports only
tensorflow and tensorflow_text (no keras, no keras_bert3), as a serving client
would: `tests/saved_model_client.py` with .npz instead of JSON in between, so
that outputs of any rank come back as arrays, string matrices included (the
JSON client returns 1-D string outputs only), and bytes (invalid UTF-8
included) go through unchanged, without pickle."""

import os
import subprocess
import sys

import numpy as np

CLIENT = r"""
import sys
import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the tf-text ops)

# (`import tensorflow` itself may pull in keras and jax; our code must not be needed.)
assert not any(m.startswith("keras_bert3") for m in sys.modules)
export_dir, request_path, out_path = sys.argv[1:]
model = tf.saved_model.load(export_dir)
request = np.load(request_path)
calls = {}
for key in request.files:  # "call:signature:input"
    call, signature, name = key.split(":")
    calls.setdefault((call, signature), {})[name] = tf.constant(request[key])
outputs = {}
for (call, signature), inputs in calls.items():
    for name, value in model.signatures[signature](**inputs).items():
        value = value.numpy()
        outputs[f"{call}:{name}"] = value.astype(bytes) if value.dtype == object else value
np.savez(out_path, **outputs)
"""


def call_in_fresh_process(export_dir, tmp_path, calls: dict) -> dict:
    """Runs `calls` (`{call: (signature, {input: array})}`) on the SavedModel in
    a fresh process; returns `{call: {output: array}}` (strings as bytes arrays)."""
    request = {f"{call}:{signature}:{name}": np.asarray(value)
               for call, (signature, inputs) in calls.items() for name, value in inputs.items()}  # fmt: skip
    request_path, out_path = tmp_path / "request.npz", tmp_path / "outputs.npz"
    np.savez(request_path, **request)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("KERAS_BACKEND", None)
    client = subprocess.run([sys.executable, "-c", CLIENT, str(export_dir), str(request_path), str(out_path)],
                            env=env, capture_output=True, text=True, check=False)  # fmt: skip
    assert client.returncode == 0, client.stderr[-3000:]
    results = {}
    for key, value in np.load(out_path).items():
        call, name = key.split(":")
        results.setdefault(call, {})[name] = value
    return results
