"""onnxruntime-extensions' custom ops library, loaded so that its regular expressions work
where TensorFlow is loaded: TensorFlow makes its RE2 symbols global, and a library loaded after it
binds to that copy, whose regexes then silently match nothing. Loaded with `RTLD_DEEPBIND` before
the `onnxruntime_extensions` package is imported, the library keeps its own RE2.
"""

import ctypes
import functools
import glob
import importlib.util
import os
import sys


@functools.lru_cache(maxsize=None)
def string_ops_library() -> str:
    """The path of the custom ops library, loaded with its own RE2 and checked; RuntimeError where
    someone else loaded it after TensorFlow."""
    spec = importlib.util.find_spec("onnxruntime_extensions")
    if spec is None:
        raise ImportError("Serving an ONNX text model needs onnxruntime-extensions: pip install 'keras-bert3[onnx]'.")
    (path,) = glob.glob(os.path.join(spec.submodule_search_locations[0], "_extensions_pydll*.so"))
    if "onnxruntime_extensions" not in sys.modules:
        ctypes.CDLL(path, mode=os.RTLD_LOCAL | getattr(os, "RTLD_DEEPBIND", 0))
    if not _regular_expressions_work(path):
        raise RuntimeError(
            "onnxruntime-extensions was loaded after TensorFlow in this process, and its regular expressions "
            "do not work (they bind to TensorFlow's RE2). Serve the ONNX model from a process without "
            "TensorFlow, or let keras_bert3 load onnxruntime-extensions (do not import it yourself)."
        )
    return path


def _regular_expressions_work(path: str) -> bool:
    """Whether `StringRegexSplitWithOffsets` splits "ab" into "a" and "b"."""
    import numpy as np
    import onnxruntime
    from onnx import TensorProto
    from onnx import helper

    text = helper.make_tensor_value_info("text", TensorProto.STRING, [None])
    pattern = helper.make_tensor("pattern", TensorProto.STRING, [1], [b"(.)"])
    outputs = ["pieces", "begins", "ends", "rows"]
    node = helper.make_node(
        "StringRegexSplitWithOffsets", ["text", "pattern", "pattern"], outputs, domain="ai.onnx.contrib"
    )
    graph = helper.make_graph(
        [node],
        "check",
        [text],
        [helper.make_tensor_value_info(outputs[0], TensorProto.STRING, [None])]
        + [helper.make_tensor_value_info(name, TensorProto.INT64, [None]) for name in outputs[1:]],
        [pattern],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.contrib", 1)]
    )
    options = onnxruntime.SessionOptions()
    options.register_custom_ops_library(path)
    session = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(["pieces"], {"text": np.array(["ab"], dtype=object)})[0].tolist() == ["a", "b"]
