"""Calls an exported SavedModel from a fresh Python process that imports only
tensorflow and tensorflow_text (no keras, no keras_bert3), as TF Serving would.

    outputs = call_in_fresh_process(export_dir, tmp_path, {
        "texts": ("serving_default", {"text": ["Some text."]}),
        "ids": ("serve_token_ids", {"token_ids": ids, "segment_ids": segments, "padding_mask": mask}),
    })
    outputs["texts"]["logits"]  # numpy array

Inputs of Python strings or bytes become tf.string tensors (bytes are sent
as-is, so invalid UTF-8 can be tested); anything else becomes an int32 or
float32 tensor of its numpy dtype. String outputs come back as lists of bytes.
"""

import json
import os
import subprocess
import sys

import numpy as np

CLIENT = r"""
import json, sys
import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the tf-text ops)

# (`import tensorflow` itself may pull in keras and jax; our code must not be needed.)
assert not any(m.startswith("keras_bert3") for m in sys.modules)
export_dir, request_path, out_path = sys.argv[1:]
model = tf.saved_model.load(export_dir)
outputs = {}
for call, (signature, inputs) in json.load(open(request_path)).items():
    tensors = {}
    for key, (kind, value) in inputs.items():
        if kind == "bytes":
            tensors[key] = tf.constant([v.encode("latin-1") for v in value], tf.string)
        else:
            tensors[key] = tf.constant(np.array(value, kind))
    result = model.signatures[signature](**tensors)
    outputs[call] = {
        key: ([v.decode("latin-1") for v in value.numpy().tolist()] if value.dtype == tf.string
              else value.numpy().tolist())
        for key, value in result.items()
    }
json.dump(outputs, open(out_path, "w"))
"""


def _encode(value):
    value = list(value) if isinstance(value, (list, tuple)) else value
    if isinstance(value, list) and value and isinstance(value[0], (str, bytes)):
        return "bytes", [(v.encode("utf-8") if isinstance(v, str) else v).decode("latin-1") for v in value]
    array = np.asarray(value)
    kind = "int32" if np.issubdtype(array.dtype, np.integer) else "float32"
    return kind, array.tolist()


def call_in_fresh_process(export_dir, tmp_path, calls: dict) -> dict:
    """Runs `calls` (`name: (signature, inputs)`) on the SavedModel; returns `name: {output: value}`."""
    request = {name: (signature, {key: _encode(value) for key, value in inputs.items()})
               for name, (signature, inputs) in calls.items()}  # fmt: skip
    request_path, out_path = tmp_path / "request.json", tmp_path / "outputs.json"
    request_path.write_text(json.dumps(request))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("KERAS_BACKEND", None)
    client = subprocess.run([sys.executable, "-c", CLIENT, str(export_dir), str(request_path), str(out_path)],
                            env=env, capture_output=True, text=True)  # fmt: skip
    assert client.returncode == 0, client.stderr[-3000:]
    outputs = json.loads(out_path.read_text())
    return {
        name: {key: [v.encode("latin-1") for v in value] if value and isinstance(value[0], str) else np.asarray(value)
               for key, value in result.items()}
        for name, result in outputs.items()
    }  # fmt: skip


def signatures_listed(export_dir, names=("serving_default", "serve_token_ids")) -> str:
    """`saved_model_cli show --all` of the export, after checking that it lists `names`."""
    shown = subprocess.run(
        ["saved_model_cli", "show", "--all", "--dir", str(export_dir)],
        capture_output=True, text=True, check=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
    ).stdout  # fmt: skip
    for name in names:
        assert f"signature_def['{name}']" in shown
    return shown
