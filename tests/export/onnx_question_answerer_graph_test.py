"""The question answerer's strings graph (`onnx_question_answerer_graph`) on
its own: the word of every piece traced back to the characters of the text
as `BertTokenizer.tokenize_with_offsets` gives them, on every real line of the
tokenizer test set and odd Unicode; the windows as
`QuestionAnsweringPreprocessor`'s on real passages longer than a window.
The answers themselves: tests/export/onnx_export_test.py."""

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto
from onnx import helper

from keras_bert3.export.onnx_export import onnx_session
from keras_bert3.export.onnx_graph import INPUT_NAMES
from keras_bert3.export.onnx_graph import GraphBuilder
from keras_bert3.export.onnx_question_answerer_graph import passage_token_nodes
from keras_bert3.export.onnx_question_answerer_graph import window_nodes
from keras_bert3.export.onnx_tokenizer_graph import OPSETS
from keras_bert3.export.onnx_tokenizer_graph import character_table
from keras_bert3.preprocessing.question_answering_preprocessor import QuestionAnsweringPreprocessor
from keras_bert3.tokenizers import BertTokenizer
from tests.export.onnx_tokenizer_graph_test import ODD_TEXTS
from tests.qa_passages import passages
from tests.real_text import real_lines

pytestmark = pytest.mark.backend_free


def session_of(g: GraphBuilder, inputs: list[str], outputs: dict, tmp_path):
    """An onnxruntime session on the nodes of `g`: string `(batch,)` `inputs`, int64 `outputs` by name."""
    for name, value in outputs.items():
        g.nodes.append(helper.make_node("Cast", [value], [name], to=TensorProto.INT64))
    graph = helper.make_graph(
        g.nodes,
        "test",
        [helper.make_tensor_value_info(name, TensorProto.STRING, ["batch"]) for name in inputs],
        [helper.make_tensor_value_info(name, TensorProto.INT64, None) for name in outputs],
        g.initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in OPSETS.items()])
    onnx.save(model, str(tmp_path / "test.onnx"))
    return onnx_session(str(tmp_path / "test.onnx"))


def word_offsets_session(tokenizer, tmp_path):
    g = GraphBuilder()
    texts = g.op("Concat", ["text", g.const([""])], axis=0)
    table = character_table(tokenizer.lowercase, tokenizer.strip_accents)
    tokens = passage_token_nodes(g, tokenizer, table, texts)
    outputs = {
        "ids": tokens["ids"],
        "row_starts": tokens["row_starts"],
        "word_start": g.op("Gather", [tokens["piece_start"], tokens["first_piece"]], axis=0),
        "word_end": g.op("Gather", [tokens["piece_end"], tokens["last_piece"]], axis=0),
    }
    return session_of(g, ["text"], outputs, tmp_path)


@pytest.mark.parametrize("settings", [{}, {"lowercase": False}, {"special_tokens_in_strings": False}])
@pytest.mark.slow
def test_word_of_every_piece_as_tokenize_with_offsets(settings, minilm_dir, tmp_path):
    tokenizer = BertTokenizer(os.path.join(minilm_dir, "vocab.txt"), **settings)
    session = word_offsets_session(tokenizer, tmp_path)
    texts = (list(real_lines()) if not settings else list(real_lines())[::7]) + ODD_TEXTS
    texts += ["\ue000[MASK]\t東京\n\x00ﬁx\x00", "a\u0301\u0301 e\u0301x", "İİ ǅ Σ", "中" * 300]
    differing = []
    for start in range(0, len(texts), 512):
        batch = texts[start : start + 512]
        ours = dict(
            zip(
                ["ids", "row_starts", "word_start", "word_end"],
                session.run(None, {"text": np.array(batch, dtype=object)}),
            )
        )
        ids, _, _, word_starts, word_ends = (
            x.to_list() for x in tokenizer.tokenize_with_offsets(batch, word_offsets=True)
        )
        for row, text in enumerate(batch):
            piece = slice(ours["row_starts"][row], ours["row_starts"][row + 1])
            theirs = [ids[row], word_starts[row], word_ends[row]]
            if [ours[name][piece].tolist() for name in ("ids", "word_start", "word_end")] != theirs:
                differing.append(text)
    assert not differing, f"{len(differing)} of {len(texts)} differ, e.g. {differing[:3]}"


def test_windows_as_the_preprocessor_on_long_passages(tokenizer, tmp_path):
    preprocessor = QuestionAnsweringPreprocessor(
        tokenizer, sequence_length=64, doc_stride=16, max_query_length=12, max_windows=6
    )
    g = GraphBuilder()
    empty = g.const([""])
    texts = g.op("Concat", ["question", empty, "context", empty], axis=0)
    table = character_table(tokenizer.lowercase, tokenizer.strip_accents)
    model_inputs, windows = window_nodes(g, preprocessor, table, texts)
    outputs = dict(zip(INPUT_NAMES, model_inputs))
    outputs["windows"] = windows["windows"]
    session = session_of(g, ["question", "context"], outputs, tmp_path)
    questions, contexts = map(list, zip(*passages()))
    questions += ["", "A question far longer than the twelve pieces a question may keep in a window here?", "?"]
    contexts += ["", "Short.", "word " * 2000]  # The last: more windows than max_windows.
    ours = dict(
        zip(
            list(outputs),
            session.run(
                None, {"question": np.array(questions, dtype=object), "context": np.array(contexts, dtype=object)}
            ),
        )
    )
    theirs = {key: np.asarray(value) for key, value in preprocessor((questions, contexts)).items()}
    assert ours["windows"].tolist() == np.bincount(theirs["example_index"], minlength=len(questions)).tolist()
    assert ours["windows"].max() == 6 and ours["windows"].min() == 1
    for key in INPUT_NAMES:
        np.testing.assert_array_equal(ours[key], theirs[key])
    empty_batch = session.run(None, {"question": np.array([], dtype=object), "context": np.array([], dtype=object)})
    assert [value.shape[0] for value in empty_batch] == [0, 0, 0, 0]
