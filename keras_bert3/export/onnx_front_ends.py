"""The strings front ends of the ONNX exports (`text_model.onnx`): for each kind of task, its string inputs, the
nodes that tokenize them into the model's inputs, and the nodes that turn the model's outputs into the task's
answers. A task names its own (`TaskSpec.strings_front_end`): a function here by name, "module:function", or any
function of the same signature, `front_end(g, preprocessor, table, settings) -> FrontEnd`."""

import dataclasses
from collections.abc import Callable

from keras_bert3.export import onnx_question_answerer_graph
from keras_bert3.export import onnx_word_tags_graph
from keras_bert3.export.onnx_graph import GraphBuilder
from keras_bert3.export.onnx_index_ops import without_last_row
from keras_bert3.export.onnx_tokenizer_graph import joined_segment_nodes
from keras_bert3.export.onnx_tokenizer_graph import token_id_nodes


@dataclasses.dataclass
class FrontEnd:
    """What a front end adds to a task's ONNX model on token ids."""

    input_names: list[str]  # Its string inputs, `(batch,)` unless `input_ranks` says more.
    model_inputs: list[str]  # Nodes of the model's `token_ids`, `segment_ids` and `padding_mask` (any integer type).
    # The graph's outputs from the model's (`after` collects the nodes): the model's as they are by default.
    outputs: Callable = lambda after, g, model_outputs: model_outputs
    input_ranks: dict = dataclasses.field(default_factory=dict)  # Inputs of more axes than `(batch,)`.


def texts_with_empty(g: GraphBuilder, names) -> str:
    """The strings of `names` one after the other, each followed by one "" (so that no custom op sees an empty
    tensor: they crash); a row each that `without_last_row` drops again."""
    empty = g.const([""])
    return g.op("Concat", [part for name in names for part in (name, empty)], axis=0)


def texts(g: GraphBuilder, preprocessor, table: dict, settings: dict) -> FrontEnd:
    """`text` (and `text_pair` for sentence pairs): the texts as the model's rows."""
    names = ["text", "text_pair"] if getattr(preprocessor, "sentence_pairs", False) else ["text"]
    ids, row_starts = token_id_nodes(g, preprocessor.tokenizer, table, texts_with_empty(g, names))
    model_inputs = joined_segment_nodes(g, preprocessor, ids, row_starts, pairs=len(names) == 2)
    return FrontEnd(names, [without_last_row(g, value) for value in model_inputs])


def words(g: GraphBuilder, preprocessor, table: dict, settings: dict) -> FrontEnd:
    """`text`, split into words at ASCII whitespace; a token classifier's per-word outputs besides its own."""
    model_inputs, tags = onnx_word_tags_graph.word_nodes(g, preprocessor, table, texts_with_empty(g, ["text"]))

    def outputs(after, g, model_outputs):
        return model_outputs + onnx_word_tags_graph.word_output_nodes(after, g, tags)

    return FrontEnd(["text"], [without_last_row(g, value) for value in model_inputs], outputs)


def question_context(g: GraphBuilder, preprocessor, table: dict, settings: dict) -> FrontEnd:
    """`question` and `context`, the context in overlapping windows; the best span of at most
    `settings["max_answer_length"]` pieces (15 unless given) as the answer, or "" where no answer outscores it by
    more than `settings["null_threshold"]` (unless None, as by default)."""
    names = ["question", "context"]
    texts = texts_with_empty(g, names)
    model_inputs, windows = onnx_question_answerer_graph.window_nodes(g, preprocessor, table, texts)
    options = {"max_answer_length": settings.get("max_answer_length", 15)}
    options["null_threshold"] = settings.get("null_threshold")
    options["n_best"] = settings.get("n_best")

    def outputs(after, g, model_outputs):
        return onnx_question_answerer_graph.answer_nodes(after, windows, **options)

    return FrontEnd(names, model_inputs, outputs)


def context_choices(g: GraphBuilder, preprocessor, table: dict, settings: dict) -> FrontEnd:
    """`context` `(batch,)` and `choices` `(batch, choices)`: each choice a pair with its context, the model's
    inputs `(batch, choices, length)`."""
    shape = g.op("Shape", ["choices"])  # (batch, choices)
    count = g.op("Slice", [shape, g.const([1]), g.const([2])])
    flat_choices = g.op("Reshape", ["choices", g.const([-1])], "flat_choices")
    pair_rows = g.op("Range", [g.const(0), g.op("ReduceProd", [shape], keepdims=0), g.const(1)])
    of_context = g.op("Div", [pair_rows, g.op("Squeeze", [count, g.const([0])])])  # Each choice's context.
    contexts = g.op("Gather", ["context", of_context], "choice_contexts", axis=0)
    pairs = texts_with_empty(g, [contexts, flat_choices])
    ids, row_starts = token_id_nodes(g, preprocessor.tokenizer, table, pairs)
    rows = joined_segment_nodes(g, preprocessor, ids, row_starts, pairs=True, pair_names=(contexts, flat_choices))
    by_choice = g.op("Concat", [shape, g.const([-1])], axis=0)
    model_inputs = [g.op("Reshape", [without_last_row(g, value), by_choice]) for value in rows]
    return FrontEnd(["context", "choices"], model_inputs, input_ranks={"choices": ["batch", "choices"]})
