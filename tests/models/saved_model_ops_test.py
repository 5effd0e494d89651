"""An exported SavedModel needs only TensorFlow core and tf-text ops (the
ones TF Serving builds in): every op of its graph and function library is
registered by `import tensorflow` alone, or by `import tensorflow_text`."""

import os
import subprocess
import sys

import keras

from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.bert_classifier import BertClassifier
from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer

# Fresh process: reads the graph, checks registration before and after tf-text.
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
print("CORE", " ".join(sorted(core)))
print("TEXT", " ".join(sorted(text)))
print("OTHER", " ".join(sorted(ops - core - text)))
"""


def op_census(export_dir) -> dict[str, set[str]]:
    """`{"CORE": ops, "TEXT": ops, "OTHER": ops}` of a SavedModel, from a fresh process."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("KERAS_BACKEND", None)
    result = subprocess.run([sys.executable, "-c", OP_CENSUS, str(export_dir)], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [line.split(" ", 1) + [""] for line in result.stdout.splitlines() if line.split(" ")[0] in ("CORE", "TEXT", "OTHER")]
    return {kind: set(ops.split()) for kind, ops, *_ in lines}


def test_classifier_export_uses_only_tensorflow_and_tf_text_ops(minilm_dir, tmp_path):
    keras.utils.set_random_seed(0)
    tokenizer = BertTokenizer.from_preset(minilm_dir)
    backbone = BertBackbone(vocabulary_size=tokenizer.vocabulary_size(), num_layers=1, num_heads=2,
                            hidden_dim=8, intermediate_dim=16, max_sequence_length=32)  # fmt: skip
    BertClassifier(backbone, 2, tokenizer=tokenizer, sequence_length=32).export(str(tmp_path / "export"))
    census = op_census(tmp_path / "export")
    assert census["OTHER"] == set(), census["OTHER"]
    assert {"WordpieceTokenizeWithOffsets", "RegexSplitWithOffsets"} & census["TEXT"], census["TEXT"]
