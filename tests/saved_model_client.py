"""Calls an exported SavedModel from the serving runtime: a Python process
that imports only tensorflow and tensorflow_text (no keras, no keras_bert3),
as TF Serving does, in the TensorFlow that TF Serving runs
(`tests/serving_runtime.py`: 2.20, while exports are written with 2.21). Like
a TF Serving server, one such process loads every export of a test session,
one after the other (its start-up, importing TensorFlow, is paid once); each
export is loaded afresh from disk. For each export the process takes the
graph's op census against that runtime's op registry, lists its signatures
(what `saved_model_cli show` prints) and replays the export's TF Serving
warm-up records through them as the server does at load.

    served = call_in_serving_runtime(export_dir, tmp_path, {
        "texts": ("serving_default", {"text": ["Some text."]}),
        "ids": ("serve_token_ids", {"token_ids": ids, "segment_ids": segments, "padding_mask": mask}),
    })
    served["texts"]["logits"]  # numpy array
    served.signatures["serving_default"]["inputs"]["text"]  # "DT_STRING"
    served.warmup[0]["logits"]  # the outputs of the first warm-up request

A call whose name starts with "refused" is expected to fail: the error's type
and message come back as `served[call]["error"][0]` (bytes), and the process
goes on with the other calls.
    assert_serving_ops(served)

Requests and outputs travel as .npz files (no pickle): strings and bytes as
bytes arrays (invalid UTF-8 goes through unchanged), integers as int32, so
outputs of any rank come back as numpy arrays, string matrices included.
"""

import atexit
import dataclasses
import json
import os
import subprocess
import sys
import tempfile

import keras
import numpy as np

from tests.serving_runtime import TENSORFLOW_VERSION
from tests.serving_runtime import serving_runtime_python

CLIENT = r"""
import json
import re
import sys
import traceback
import numpy as np
import tensorflow as tf
from tensorflow.core.framework import op_def_pb2
from tensorflow.core.framework import types_pb2
from tensorflow.core.protobuf import saved_model_pb2
from tensorflow.python.client import pywrap_tf_session


def registered_ops():
    op_list = op_def_pb2.OpList()
    op_list.ParseFromString(pywrap_tf_session.TF_GetBuffer(pywrap_tf_session.TF_GetAllOpList()))
    return {op.name for op in op_list.op}


# (`import tensorflow` itself may pull in keras and jax; our code must not be needed.)
assert not any(m.startswith("keras_bert3") for m in sys.modules)
CORE_OPS = registered_ops()  # What `import tensorflow` registers.
import tensorflow_text  # noqa: E402,F401  (registers the tf-text ops)
TEXT_OPS = registered_ops() - CORE_OPS


def serve(export_dir, request_path, out_path, info_path):
    WARMUP = export_dir + "/assets.extra/tf_serving_warmup_requests"

    # The op census: each op's registration before and after tf-text, and the signatures.
    saved_model = saved_model_pb2.SavedModel()
    with open(export_dir + "/saved_model.pb", "rb") as f:
        saved_model.ParseFromString(f.read())
    meta_graph = saved_model.meta_graphs[0]
    graph = meta_graph.graph_def
    ops = {node.op for node in graph.node}
    ops |= {node.op for function in graph.library.function for node in function.node_def}
    ops -= {function.signature.name for function in graph.library.function}  # Calls of library functions.
    core, text = ops & CORE_OPS, ops & TEXT_OPS
    # JAX exports: the StableHLO version each XlaCallModule's artifact was written for (its bytecode's producer).
    nodes = list(graph.node) + [node for function in graph.library.function for node in function.node_def]
    stablehlo = sorted({re.search(rb"StableHLO_v([0-9.]+)", node.attr["module"].s).group(1).decode()
                        for node in nodes if node.op == "XlaCallModule"})
    signatures = {
        name: {kind: {key: types_pb2.DataType.Name(tensor.dtype) for key, tensor in getattr(signature, kind).items()}
               for kind in ("inputs", "outputs")}
        for name, signature in meta_graph.signature_def.items() if name != "__saved_model_init_op"
    }
    model = tf.saved_model.load(export_dir)
    request = np.load(request_path)
    calls = {}
    for key in request.files:  # "call:signature:input"
        call, signature, name = key.split(":")
        calls.setdefault((call, signature), {})[name] = tf.constant(request[key])
    # The warm-up records, parsed with TF Serving's own protos, as the server reads them.
    warmup = 0
    if tf.io.gfile.exists(WARMUP):
        from tensorflow_serving.apis import prediction_log_pb2
        for record in tf.data.TFRecordDataset(WARMUP):
            log = prediction_log_pb2.PredictionLog.FromString(record.numpy())
            inputs = {name: tf.constant(tf.make_ndarray(proto)) for name, proto in log.predict_log.request.inputs.items()}
            calls[(f"warmup{warmup}", log.predict_log.request.model_spec.signature_name)] = inputs
            warmup += 1
    with open(info_path, "w") as f:
        json.dump({"ops": {"CORE": sorted(core), "TEXT": sorted(text), "OTHER": sorted(ops - core - text)},
                   "signatures": signatures, "tensorflow": tf.__version__, "warmup": warmup, "stablehlo": stablehlo}, f)
    outputs = {}
    for (call, signature), inputs in calls.items():
        try:
            result = model.signatures[signature](**inputs)
        except Exception as error:  # A bad request must fail cleanly, the process going on.
            if not call.startswith("refused"):
                raise
            outputs[f"{call}:error"] = np.array([f"{type(error).__name__}: {error}".encode()])
            continue
        for name, value in result.items():
            value = value.numpy()
            outputs[f"{call}:{name}"] = value.astype(bytes) if value.dtype == object else value
    np.savez(out_path, **outputs)


# One request a line: a JSON list of serve()'s four paths; one JSON answer a line.
for line in sys.stdin:
    try:
        serve(*json.loads(line))
        answer = {"error": None}
    except BaseException:
        answer = {"error": traceback.format_exc()}
    print(json.dumps(answer), flush=True)
"""


@dataclasses.dataclass
class Served:
    """What the serving runtime saw: `served[call][output]` arrays, the graph's
    `ops` by registration (`"CORE"`: `import tensorflow`, `"TEXT"`: `import
    tensorflow_text`, `"OTHER"`), `signatures[name]["inputs" | "outputs"][key]`
    dtypes as `saved_model_cli` names them (`"DT_STRING"`), the runtime's
    `tensorflow` version, the outputs of the export's warm-up records in
    their order (`warmup[i][output]`; empty without records), and the
    StableHLO versions that its `XlaCallModule` ops (JAX exports) were
    written for (`stablehlo`; empty for TensorFlow exports)."""

    outputs: dict
    ops: dict
    signatures: dict
    tensorflow: str
    warmup: list
    stablehlo: list

    def __getitem__(self, call: str) -> dict:
        return self.outputs[call]


def _as_array(value) -> np.ndarray:
    if isinstance(value, np.ndarray) and value.dtype.kind == "S":  # Bytes, empty batches included.
        return value
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], (str, bytes)):
        return np.array([v.encode("utf-8") if isinstance(v, str) else v for v in value], dtype=object).astype(bytes)
    array = np.asarray(value)
    return array.astype(np.int32) if np.issubdtype(array.dtype, np.integer) else array


class ServingRuntime:
    """The serving runtime's process, started at the first call and ended at
    exit (its input closed); started again if it died."""

    def __init__(self):
        self.process = None
        self.log = None
        atexit.register(self.close)

    def call(self, *paths) -> None:
        """Serves one request (`CLIENT`'s `serve(*paths)`); a failure raises with the runtime's traceback."""
        if self.process is None or self.process.poll() is not None:
            self.start()
        try:
            self.process.stdin.write(json.dumps([str(p) for p in paths]) + "\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:  # The process died (a crash inside TensorFlow): its log says why.
            self.process.wait()
            with open(self.log.name, encoding="utf-8", errors="replace") as f:
                raise AssertionError(f"the serving runtime exited with {self.process.returncode}: {f.read()[-3000:]}")
        error = json.loads(line)["error"]
        assert error is None, error[-3000:]

    def start(self) -> None:
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
        for name in ("KERAS_BACKEND", "PYTHONPATH"):
            env.pop(name, None)
        self.log = tempfile.NamedTemporaryFile(prefix="serving-runtime-", suffix=".log", delete=False)
        self.process = subprocess.Popen(
            [serving_runtime_python(), "-c", CLIENT],
            env=env,
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
        )

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=60)
        if self.log is not None:
            os.unlink(self.log.name)
            self.log = None


SERVING_RUNTIME = ServingRuntime()


def call_in_serving_runtime(export_dir, tmp_path, calls: dict) -> Served:
    """Runs `calls` (`{call: (signature, {input: value})}`) on the SavedModel,
    loaded from disk by the serving runtime; returns what it served (strings
    as bytes arrays), its ops and signatures."""
    request = {
        f"{call}:{signature}:{name}": _as_array(value)
        for call, (signature, inputs) in calls.items()
        for name, value in inputs.items()
    }
    request_path, out_path, info_path = tmp_path / "request.npz", tmp_path / "outputs.npz", tmp_path / "info.json"
    np.savez(request_path, **request)
    SERVING_RUNTIME.call(export_dir, request_path, out_path, info_path)
    outputs = {}
    for key, value in np.load(out_path).items():
        call, name = key.split(":")
        outputs.setdefault(call, {})[name] = value
    with open(info_path, encoding="utf-8") as f:
        info = json.load(f)
    if serving_runtime_python() != sys.executable:
        assert info["tensorflow"] == TENSORFLOW_VERSION, (
            f"{serving_runtime_python()} runs TensorFlow {info['tensorflow']}"
        )
    warmup = [outputs.pop(f"warmup{i}") for i in range(info["warmup"])]
    ops = {kind: set(names) for kind, names in info["ops"].items()}
    return Served(outputs, ops, info["signatures"], info["tensorflow"], warmup, info["stablehlo"])


def assert_serving_ops(served: Served) -> None:
    """Every op is TensorFlow core or tf-text (what TF Serving builds in), the
    tokenizer is in the graph, and a JAX export's model is StableHLO that the
    TensorFlow which wrote it reads (JAX alone writes newer: JAX 0.11 with
    TensorFlow 2.21 gave exports that no TensorFlow 2.21 could load)."""
    assert served.ops["OTHER"] == set(), f"ops outside TensorFlow and tf-text: {served.ops['OTHER']}"
    assert "RegexSplitWithOffsets" in served.ops["TEXT"], served.ops["TEXT"]
    assert {"serving_default", "serve_token_ids"} <= set(served.signatures), served.signatures
    if keras.backend.backend() == "jax":
        from tensorflow.compiler.mlir.stablehlo import stablehlo

        from keras_bert3.upstream.stablehlo_target import version_tuple

        readable = version_tuple(stablehlo.get_current_version())
        assert served.stablehlo and all(version_tuple(v) <= readable for v in served.stablehlo), (
            f"StableHLO {served.stablehlo}; this TensorFlow reads up to {stablehlo.get_current_version()}"
        )


def assert_warmup_served(served: Served, export_dir) -> list:
    """The export's warm-up records, read back with `read_warmup_requests`, all
    ran in the serving runtime (as TF Serving runs them at load): as many as
    written, for both signatures, every float output finite. Returns the
    requests `[(signature, inputs)]`, in the order of `served.warmup`."""
    from keras_bert3.export.serving_warmup import read_warmup_requests

    requests = read_warmup_requests(str(export_dir))
    assert len(served.warmup) == len(requests) > 0
    assert {signature for signature, _ in requests} == {"serving_default", "serve_token_ids"}
    for outputs in served.warmup:
        assert outputs, "a warm-up request gave no outputs"
        for value in outputs.values():
            assert value.dtype.kind != "f" or np.isfinite(value).all()
    return requests
