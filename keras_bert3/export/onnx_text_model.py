"""The strings-in ONNX model: a task's model on token ids with its strings front end (`onnx_front_ends`) around it:
BERT's tokenizer in front, and a token classifier's words or a question answerer's windows and answers."""

import importlib

from onnx import TensorProto
from onnx import helper

from keras_bert3.export import onnx_front_ends
from keras_bert3.export.onnx_graph import INPUT_NAMES
from keras_bert3.export.onnx_graph import GraphBuilder
from keras_bert3.export.onnx_tokenizer_graph import OPSETS
from keras_bert3.export.onnx_tokenizer_graph import character_table

# The names of keras_bert3's own front ends (functions of `onnx_front_ends`); a task may give any other.
FRONT_ENDS = ("texts", "words", "question_context", "context_choices")


def text_model(
    token_ids_model,
    preprocessor,
    *,
    front_end=None,
    max_answer_length: int = 15,
    settings: dict | None = None,
) -> "onnx.ModelProto":  # noqa: F821
    """`token_ids_model` (an ONNX model on int32 `token_ids`, `segment_ids`, `padding_mask`) with
    `preprocessor`'s tokenizer in front, taking string inputs (needs onnxruntime-extensions).

    `front_end` (the task's `spec.strings_front_end`): a function of `onnx_front_ends` by name ("texts": `text`,
    and `text_pair` for pairs; "words" adds a token classifier's per-word outputs; "question_context" takes
    `question` and `context` and gives the best span; "context_choices" takes `context` and `choices`),
    "module:function", or such a function. `settings` (the task's) reach the front end; `max_answer_length`, the
    longest answer in pieces, is one. None (deprecated): guessed from the preprocessor.
    """
    front_end = _guessed_front_end(preprocessor) if front_end is None else front_end
    build = front_end_function(front_end)
    g = GraphBuilder(prefix="tokenize/")
    tokenizer = preprocessor.tokenizer
    table = character_table(tokenizer.lowercase, tokenizer.strip_accents)
    strings = build(g, preprocessor, table, {"max_answer_length": max_answer_length} | (settings or {}))
    for name, value in zip(INPUT_NAMES, strings.model_inputs):
        g.nodes.append(helper.make_node("Cast", [value], [name], name=f"tokenize/{name}", to=TensorProto.INT32))
    graph = token_ids_model.graph
    after = GraphBuilder(prefix="after/")
    outputs = strings.outputs(after, g, list(graph.output))
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.STRING, strings.input_ranks.get(name, ["batch"]))
        for name in strings.input_names
    ]
    model = helper.make_model(
        helper.make_graph(
            g.nodes + list(graph.node) + after.nodes,
            graph.name,
            inputs,
            outputs,
            g.initializers + list(graph.initializer) + after.initializers,
        ),
        opset_imports=_opsets(token_ids_model),
        producer_name="keras_bert3",
    )
    helper.set_model_props(model, {p.key: p.value for p in token_ids_model.metadata_props})
    return model


def front_end_function(front_end):
    """The function of a task's `strings_front_end`: itself, a function of `onnx_front_ends` by name, or one at
    "module:function"."""
    if callable(front_end):
        return front_end
    module, _, name = str(front_end).rpartition(":")
    found = getattr(importlib.import_module(module) if module else onnx_front_ends, name, None)
    if not callable(found):
        raise ValueError(
            f"front_end={front_end!r}: use a function of keras_bert3.export.onnx_front_ends ({', '.join(FRONT_ENDS)}), "
            '"module:function", or a function.'
        )
    return found


def _guessed_front_end(preprocessor) -> str:
    """The front end guessed from the preprocessor, with a `DeprecationWarning`."""
    from keras_bert3.renamed import warn_renamed

    guessed = "question_context" if hasattr(preprocessor, "doc_stride") else "words"
    guessed = guessed if guessed == "question_context" or hasattr(preprocessor, "as_words") else "texts"
    warn_renamed(
        "text_model(model, preprocessor)", f"text_model(model, preprocessor, front_end={guessed!r})", stacklevel=3
    )
    return guessed


def _opsets(model) -> list:
    """`model`'s opset imports, raised to at least `OPSETS`."""
    versions = dict(OPSETS)
    for opset in model.opset_import:
        versions[opset.domain] = max(versions.get(opset.domain, 0), opset.version)
    return [helper.make_opsetid(domain, version) for domain, version in versions.items()]
