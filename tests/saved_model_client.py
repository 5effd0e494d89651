"""Calls an exported SavedModel from a fresh Python process that imports only
tensorflow and tensorflow_text (no keras, no keras_bert3), as TF Serving would.

    outputs = call_in_fresh_process(export_dir, tmp_path, {
        "texts": ("serving_default", {"text": ["Some text."]}),
        "ids": ("serve_token_ids", {"token_ids": ids, "segment_ids": segments, "padding_mask": mask}),
    })
    outputs["texts"]["logits"]  # numpy array

Requests and outputs travel as .npz files (no pickle): strings and bytes as
bytes arrays (invalid UTF-8 goes through unchanged), integers as int32, so
outputs of any rank come back as numpy arrays, string matrices included.
"""

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


def _as_array(value) -> np.ndarray:
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], (str, bytes)):
        return np.array([v.encode("utf-8") if isinstance(v, str) else v for v in value], dtype=object).astype(bytes)
    array = np.asarray(value)
    return array.astype(np.int32) if np.issubdtype(array.dtype, np.integer) else array


def call_in_fresh_process(export_dir, tmp_path, calls: dict) -> dict:
    """Runs `calls` (`{call: (signature, {input: value})}`) on the SavedModel in
    a fresh process; returns `{call: {output: array}}` (strings as bytes arrays)."""
    request = {f"{call}:{signature}:{name}": _as_array(value)
               for call, (signature, inputs) in calls.items() for name, value in inputs.items()}  # fmt: skip
    request_path, out_path = tmp_path / "request.npz", tmp_path / "outputs.npz"
    np.savez(request_path, **request)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("KERAS_BACKEND", None)
    client = subprocess.run([sys.executable, "-c", CLIENT, str(export_dir), str(request_path), str(out_path)],
                            env=env, capture_output=True, text=True)  # fmt: skip
    assert client.returncode == 0, client.stderr[-3000:]
    results = {}
    for key, value in np.load(out_path).items():
        call, name = key.split(":")
        results.setdefault(call, {})[name] = value
    return results


# Reads the graph and checks each op's registration before and after tf-text.
OP_CENSUS = r"""
import sys
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2
from tensorflow.python.framework import op_def_registry

saved_model = saved_model_pb2.SavedModel()
with open(sys.argv[1] + "/saved_model.pb", "rb") as f:
    saved_model.ParseFromString(f.read())
graph = saved_model.meta_graphs[0].graph_def
ops = {node.op for node in graph.node}
ops |= {node.op for function in graph.library.function for node in function.node_def}
ops -= {function.signature.name for function in graph.library.function}  # Calls of library functions.
core = {op for op in ops if op_def_registry.get(op) is not None}
import tensorflow_text  # noqa: E402,F401
text = {op for op in ops - core if op_def_registry.get(op) is not None}
print("CORE", *sorted(core))
print("TEXT", *sorted(text))
print("OTHER", *sorted(ops - core - text))
"""


def op_census(export_dir) -> dict[str, set[str]]:
    """The ops of a SavedModel's graph, from a fresh process: `"CORE"` (registered
    by `import tensorflow`), `"TEXT"` (by `import tensorflow_text`), `"OTHER"`."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("KERAS_BACKEND", None)
    result = subprocess.run([sys.executable, "-c", OP_CENSUS, str(export_dir)], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    census = {}
    for line in result.stdout.splitlines():
        kind, *ops = line.split(" ")
        if kind in ("CORE", "TEXT", "OTHER"):
            census[kind] = set(ops)
    return census


def assert_serving_ops(export_dir) -> None:
    """Every op is TensorFlow core or tf-text (what TF Serving builds in), and the tokenizer is in the graph."""
    census = op_census(export_dir)
    assert census["OTHER"] == set(), f"ops outside TensorFlow and tf-text: {census['OTHER']}"
    assert "RegexSplitWithOffsets" in census["TEXT"], census["TEXT"]


def signatures_listed(export_dir, names=("serving_default", "serve_token_ids")) -> str:
    """`saved_model_cli show --all` of the export, after checking that it lists `names`."""
    shown = subprocess.run(
        ["saved_model_cli", "show", "--all", "--dir", str(export_dir)],
        capture_output=True, text=True, check=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
    ).stdout  # fmt: skip
    for name in names:
        assert f"signature_def['{name}']" in shown
    return shown
