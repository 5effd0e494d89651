"""`bert_layout_map` meets every variable of a pretrainer by its real path:
Megatron's split over the model axis (embeddings and column-parallel kernels
by their outputs, row-parallel kernels by their inputs), the rest replicated.
(Training under it: tests/distribution/distribution_test.py.)"""

import keras

from keras_bert3.distribution.bert_layout_map import bert_layout_map
from keras_bert3.models.bert_pretrainer import BertPretrainer
from tests.test_case import tiny_backbone

COLUMNS, ROWS, REPLICATED = (None, "model"), ("model", None), None


def expected_layout(path: str):
    layer, name = path.split("/")[-2:]
    if name == "embeddings" or (name == "kernel" and layer in ("qkv", "intermediate", "pooler", "dense")):
        return COLUMNS
    if name == "kernel" and layer in ("attention_output", "output"):
        return ROWS
    if name == "bias" and layer in ("qkv", "intermediate"):
        return ("model",)
    return REPLICATED


def test_every_variable_is_split_as_megatron_splits_it():
    mesh = keras.distribution.DeviceMesh((1, 1), ("batch", "model"), keras.distribution.list_devices()[:1])
    layouts = bert_layout_map(mesh)
    pretrainer = BertPretrainer(tiny_backbone(100))
    found = {variable.path: layouts[variable.path] for variable in pretrainer.weights}
    assert {path: None if layout is None else layout.axes for path, layout in found.items()} == {
        path: expected_layout(path) for path in found
    }
    split = [path for path, layout in found.items() if layout is not None]
    assert len(split) == 3 + 6 * 2 + 2  # The embeddings, six per encoder block, the MLM head's and pooler's kernels.
