"""A token classifier's words as ONNX nodes around the in-graph tokenizer, giving its SavedModel's `serving_default`
outputs from strings: words split at ASCII whitespace (a NUL inside a word comes back as U+0001), each tokenized on its
own, and per word the label and probabilities at its first piece (as `preprocessing/word_piece_alignment.py`).
"""

import numpy as np
from onnx import TensorProto
from onnx import helper

from keras_bert3.export.onnx_graph import GraphBuilder
from keras_bert3.export.onnx_index_ops import column_indices
from keras_bert3.export.onnx_index_ops import width_of
from keras_bert3.export.onnx_index_ops import without_last_row
from keras_bert3.export.onnx_tokenizer_graph import joined_segment_nodes
from keras_bert3.export.onnx_tokenizer_graph import regex_replace
from keras_bert3.export.onnx_tokenizer_graph import token_id_nodes
from keras_bert3.export.onnx_tokenizer_graph import without_nul


def word_nodes(g: GraphBuilder, preprocessor, table: dict, texts: str) -> tuple[list[str], dict]:
    """The model inputs of `texts` (the last one the added "") tokenized word by word, and `words`,
    `num_words`, `word_positions` (-1 where a word has no piece in the sequence) for `word_output_nodes`."""
    texts = regex_replace(g, without_nul(g, texts), r"[\t\n\r\f\v]", " ")
    words, counts = g.op("StringSplit", [texts], outputs=2)  # No delimiter: at runs of spaces.
    column = column_indices(g, width_of(g, words))  # (1, max_words)
    inside = g.op("Less", [column, g.op("Unsqueeze", [counts, g.const([1])])])  # (rows, max_words)
    flat = g.op("Compress", [g.op("Reshape", [words, g.const([-1])]), g.op("Reshape", [inside, g.const([-1])])])
    flat = g.op("Concat", [flat, g.const([""])], axis=0)  # One word more: never an empty tensor.
    ids, piece_starts = token_id_nodes(g, preprocessor.tokenizer, table, flat)  # (words + 2,) starts
    word_starts = g.op("Concat", [g.const([0]), g.op("CumSum", [counts, g.const(0)])], axis=0)  # (rows + 1,)
    row_starts = g.op("Gather", [piece_starts, word_starts], axis=0)  # Each text's first piece.
    model_inputs = joined_segment_nodes(g, preprocessor, ids, row_starts, pairs=False)
    word = g.op("Add", [g.op("Unsqueeze", [without_last_row(g, word_starts), g.const([1])]), column])
    word = g.op("Where", [inside, word, g.const(0)])  # (rows, max_words): flat word index.
    first_piece = g.op("Gather", [piece_starts, word], axis=0)
    after_last_piece = g.op("Gather", [piece_starts, g.op("Add", [word, g.const(1)])], axis=0)
    start = g.op("Sub", [first_piece, g.op("Unsqueeze", [without_last_row(g, row_starts), g.const([1])])])
    kept = g.op("And", [inside, g.op("Greater", [after_last_piece, first_piece])])
    kept = g.op("And", [kept, g.op("Less", [start, g.const(preprocessor.sequence_length - 2)])])
    positions = g.op("Where", [kept, g.op("Add", [start, g.const(1)]), g.const(-1)])
    return model_inputs, {"words": words, "num_words": counts, "word_positions": positions}


def word_output_nodes(after: GraphBuilder, g: GraphBuilder, tags: dict) -> list:
    """Nodes after the model that gather its `probabilities` at each word's first piece; returns the
    per-word outputs' value infos. `tags`: `word_nodes`' values (made in `g`), with the added row."""
    positions = without_last_row(g, tags["word_positions"])
    index = after.op("Unsqueeze", [after.op("Max", [positions, after.const(0)]), after.const([2])])
    gathered = after.op("GatherND", ["probabilities", index], batch_dims=1)  # (batch, max_words, labels)
    kept = after.op("GreaterOrEqual", [positions, after.const(0)])
    probabilities = after.op(
        "Where", [after.op("Unsqueeze", [kept, after.const([2])]), gathered, after.const(np.float32(0.0))]
    )
    labels = after.op("Where", [kept, after.op("ArgMax", [probabilities], axis=-1, keepdims=0), after.const(-1)])
    values = {
        "words": (without_last_row(g, tags["words"]), TensorProto.STRING),
        "num_words": (without_last_row(g, tags["num_words"]), TensorProto.INT32),
        "word_positions": (positions, TensorProto.INT32),
        "word_labels": (labels, TensorProto.INT32),
        "word_probabilities": (probabilities, TensorProto.FLOAT),
    }
    outputs = []
    for name, (value, element_type) in values.items():
        if element_type in (TensorProto.INT32, TensorProto.FLOAT):
            after.nodes.append(helper.make_node("Cast", [value], [name], name=f"words/{name}", to=element_type))
        else:
            after.nodes.append(helper.make_node("Identity", [value], [name], name=f"words/{name}"))
        outputs.append(helper.make_tensor_value_info(name, element_type, None))
    return outputs
