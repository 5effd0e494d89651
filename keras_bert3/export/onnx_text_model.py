"""The strings-in ONNX model: a task's model on token ids with BERT's tokenizer in front, and a
token classifier's words or a question answerer's windows and answers around it."""

from onnx import TensorProto
from onnx import helper

from keras_bert3.export import onnx_question_answerer_graph
from keras_bert3.export import onnx_word_tags_graph
from keras_bert3.export.onnx_graph import INPUT_NAMES
from keras_bert3.export.onnx_graph import GraphBuilder
from keras_bert3.export.onnx_index_ops import without_last_row
from keras_bert3.export.onnx_tokenizer_graph import OPSETS
from keras_bert3.export.onnx_tokenizer_graph import character_table
from keras_bert3.export.onnx_tokenizer_graph import joined_segment_nodes
from keras_bert3.export.onnx_tokenizer_graph import token_id_nodes


FRONT_ENDS = ("texts", "words", "question_context")  # A task's `spec.strings_front_end`.


def text_model(
    token_ids_model, preprocessor, *, front_end: str | None = None, max_answer_length: int = 15
) -> "onnx.ModelProto":  # noqa: F821
    """`token_ids_model` (an ONNX model on int32 `token_ids`, `segment_ids`, `padding_mask`) with
    `preprocessor`'s tokenizer in front, taking string `(batch,)` inputs (needs onnxruntime-extensions).

    `front_end` (the task's `spec.strings_front_end`): "texts" (`text`, and `text_pair` for pairs);
    "words" adds a token classifier's per-word outputs; "question_context" takes `question` and
    `context` and gives the best span of at most `max_answer_length` pieces. None (deprecated):
    guessed from the preprocessor.
    """
    if front_end is None:
        front_end = _guessed_front_end(preprocessor)
    if front_end not in FRONT_ENDS:
        raise ValueError(f"front_end={front_end!r}: use one of {FRONT_ENDS}.")
    g = GraphBuilder(prefix="tokenize/")
    tokenizer = preprocessor.tokenizer
    table = character_table(tokenizer.lowercase, tokenizer.strip_accents)
    answers = front_end == "question_context"
    if answers:
        names = ["question", "context"]
    else:
        names = ["text", "text_pair"] if getattr(preprocessor, "sentence_pairs", False) else ["text"]
    empty = g.const([""])  # One more text each, so that no custom op sees an empty tensor (they crash).
    texts = g.op("Concat", [part for name in names for part in (name, empty)], axis=0)
    tags = windows = None
    if answers:
        model_inputs, windows = onnx_question_answerer_graph.window_nodes(g, preprocessor, table, texts)
    elif front_end == "words":
        model_inputs, tags = onnx_word_tags_graph.word_nodes(g, preprocessor, table, texts)
        model_inputs = [without_last_row(g, value) for value in model_inputs]
    else:
        ids, row_starts = token_id_nodes(g, tokenizer, table, texts)
        model_inputs = joined_segment_nodes(g, preprocessor, ids, row_starts, pairs=len(names) == 2)
        model_inputs = [without_last_row(g, value) for value in model_inputs]
    for name, value in zip(INPUT_NAMES, model_inputs):
        g.nodes.append(helper.make_node("Cast", [value], [name], name=f"tokenize/{name}", to=TensorProto.INT32))
    graph = token_ids_model.graph
    after = GraphBuilder(prefix="after/")
    outputs = list(graph.output)
    if tags is not None:
        outputs += onnx_word_tags_graph.word_output_nodes(after, g, tags)
    if windows is not None:
        outputs = onnx_question_answerer_graph.answer_nodes(after, windows, max_answer_length)
    model = helper.make_model(
        helper.make_graph(
            g.nodes + list(graph.node) + after.nodes,
            graph.name,
            [helper.make_tensor_value_info(name, TensorProto.STRING, ["batch"]) for name in names],
            outputs,
            g.initializers + list(graph.initializer) + after.initializers,
        ),
        opset_imports=_opsets(token_ids_model),
        producer_name="keras_bert3",
    )
    helper.set_model_props(model, {p.key: p.value for p in token_ids_model.metadata_props})
    return model


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
