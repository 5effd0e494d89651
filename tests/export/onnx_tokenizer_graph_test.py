"""The tokenizer inside the ONNX graph (`onnx_text_model.text_model`):
on every real line of the tokenizer test set, odd Unicode and texts past the
length limit, its model inputs equal `BertTextPreprocessor`'s (itself equal
to Hugging Face's, tests/tokenizers), for single texts, pairs, a cased
vocabulary and special token strings taken as text."""

import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto
from onnx import helper

from keras_bert3.export.onnx_export import onnx_session
from keras_bert3.export.onnx_graph import INPUT_NAMES
from keras_bert3.export.onnx_text_model import text_model
from keras_bert3.preprocessing.bert_text_preprocessor import BertTextPreprocessor
from keras_bert3.tokenizers import BertTokenizer
from tests import warm_commands
from tests.real_text import real_lines
from tests.real_text import real_pairs

pytestmark = pytest.mark.backend_free

ODD_TEXTS = [
    "",
    " ",
    "\x00",
    "Café naïve résumé — “quoted” 東京 タワー 🙂 e\u0301\u0327 İstanbul ΣΊΣΥΦΟΣ",
    "\x00\x0b\u200b\ufeff zero-width and control characters\u2028 \ue000private\U000f0001use",
    "Special [MASK] tokens[SEP]glued [CLS][PAD] [UNK] [mask] [MA\x00SK] [MA\ue000SK]",
    "دُعاء 한국어 ﬁne ℌ ① ｆｕｌｌ ⅷ \u0f40\u0f71\u0f72 𝕏",
    "word " * 200,  # Past the sequence length.
    "x" * 150 + " " + "y" * 100 + " " + "z" * 101,  # Around max_word_chars.
]


def inputs_model():
    """An ONNX model that returns its int32 model inputs: the tokenizer graph's output on its own."""
    nodes = [helper.make_node("Identity", [name], [f"{name}_out"]) for name in INPUT_NAMES]
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT32, ["batch", "length"]) for name in INPUT_NAMES]
    outputs = [
        helper.make_tensor_value_info(f"{name}_out", TensorProto.INT32, ["batch", "length"]) for name in INPUT_NAMES
    ]
    return helper.make_model(
        helper.make_graph(nodes, "inputs", inputs, outputs), opset_imports=[helper.make_opsetid("", 17)]
    )


def in_graph_tokenizer(preprocessor, tmp_path):
    path = str(tmp_path / "text_model.onnx")
    model = text_model(inputs_model(), preprocessor, front_end="texts")
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return onnx_session(path)


def assert_same_model_inputs(preprocessor, session, texts, pairs=None, batch=256):
    """Compares batch by batch; gives the lines that differ."""
    differing = []
    for start in range(0, len(texts), batch):
        text = texts[start : start + batch]
        feeds = {"text": np.array(text, dtype=object)}
        if pairs is not None:
            feeds["text_pair"] = np.array(pairs[start : start + batch], dtype=object)
        theirs = dict(zip(INPUT_NAMES, session.run(None, feeds)))
        ours = preprocessor(text if pairs is None else (text, pairs[start : start + batch]))
        ours = {key: np.asarray(value) for key, value in ours.items()}
        assert theirs["token_ids"].shape == ours["token_ids"].shape
        for row in range(len(text)):
            if any((theirs[key][row] != ours[key][row]).any() for key in INPUT_NAMES):
                differing.append(text[row] if pairs is None else (text[row], pairs[start + row]))
    assert not differing, f"{len(differing)} of {len(texts)} differ, e.g. {differing[:3]}"


@pytest.mark.slow
def test_single_texts_on_all_real_lines(tokenizer, tmp_path):
    preprocessor = BertTextPreprocessor(tokenizer, sequence_length=64, pad_to_multiple_of=1)
    session = in_graph_tokenizer(preprocessor, tmp_path)
    assert_same_model_inputs(preprocessor, session, list(real_lines()) + ODD_TEXTS)


@pytest.mark.slow
def test_pairs_truncated_longest_first(tokenizer, tmp_path):
    preprocessor = BertTextPreprocessor(tokenizer, sequence_length=24, pad_to_multiple_of=1, sentence_pairs=True)
    session = in_graph_tokenizer(preprocessor, tmp_path)
    first, second = (list(side) for side in zip(*real_pairs()))
    assert_same_model_inputs(preprocessor, session, first + ODD_TEXTS, second + ODD_TEXTS[::-1])
    with pytest.raises(Exception, match="text_pair_rows_must_equal_text_rows"):
        session.run(None, {"text": np.array(["a", "b"], dtype=object), "text_pair": np.array(["c"], dtype=object)})


@pytest.mark.parametrize("settings", [{"lowercase": False}, {"special_tokens_in_strings": False}])
@pytest.mark.slow
def test_cased_and_special_tokens_as_text(settings, minilm_dir, tmp_path):
    tokenizer = BertTokenizer(os.path.join(minilm_dir, "vocab.txt"), **settings)
    preprocessor = BertTextPreprocessor(tokenizer, sequence_length=64, pad_to_multiple_of=1)
    session = in_graph_tokenizer(preprocessor, tmp_path)
    assert_same_model_inputs(preprocessor, session, list(real_lines())[::5] + ODD_TEXTS)


@pytest.mark.slow
def test_no_strings_and_a_1_mb_string(tokenizer, tmp_path):
    preprocessor = BertTextPreprocessor(tokenizer, sequence_length=64, pad_to_multiple_of=1)
    session = in_graph_tokenizer(preprocessor, tmp_path)
    assert [output.shape for output in session.run(None, {"text": np.array([], dtype=object)})] == [(0, 2)] * 3
    huge = "Ünïcode wörds, [MASK] and 東京 " * 40_000
    assert len(huge.encode()) > 1_000_000
    assert_same_model_inputs(preprocessor, session, ["", huge, "short"])
    assert os.path.getsize(tmp_path / "text_model.onnx") < 5_000_000  # Tokenizer tables only.
    # In a batch of 64, the 1 MB string costs its own length, not 64 times it (in a server
    # process of onnxruntime and onnxruntime-extensions alone).
    serve = (
        "import numpy as np, onnxruntime, onnxruntime_extensions\n"
        "options = onnxruntime.SessionOptions()\n"
        "options.register_custom_ops_library(onnxruntime_extensions.get_library_path())\n"
        f"session = onnxruntime.InferenceSession({str(tmp_path / 'text_model.onnx')!r}, options)\n"
        "texts = np.array(['Ünïcode wörds, [MASK] and 東京 ' * 40_000] + ['short'] * 63, dtype=object)\n"
        "assert session.run(None, {'text': texts})[0].shape == (64, 64)\n"
        "print(next(int(line.split()[1]) // 1024 for line in open('/proc/self/status') if line.startswith('VmHWM')))\n"
    )
    served = subprocess.run([sys.executable, "-c", serve], capture_output=True, text=True, timeout=300)
    assert served.returncode == 0, served.stderr
    assert int(served.stdout) < 900, (
        f"{served.stdout.strip()} MB at peak"
    )  # 500 MB; a (64, longest) layout: over 2 GB at 16 rows.


@pytest.mark.slow
def test_string_ops_refused_where_they_bind_to_tensorflows_re2():
    """onnxruntime-extensions imported after TensorFlow, by the user: a clear
    error, not [UNK] for every text. Loaded by keras_bert3 after TensorFlow: works. (Each a process forked from
    one that has imported TensorFlow and not onnxruntime-extensions, tests/warm_commands.py.)"""
    check = "from keras_bert3.export.onnx_string_ops import string_ops_library; string_ops_library(); print('works')"
    run = lambda code: warm_commands.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)  # noqa: E731
    assert run(f"import tensorflow; {check}").stdout.strip() == "works"
    failed = run(f"import tensorflow, onnxruntime_extensions; {check}")
    assert failed.returncode != 0 and "loaded after TensorFlow" in failed.stderr


def test_text_model_without_a_front_end_guesses_it_as_before_with_a_warning(tokenizer):
    """The form before 2026-11-28, `text_model(model, preprocessor)`: the
    same graph as with `front_end="texts"` for a text preprocessor, and a
    `DeprecationWarning` naming the new form."""
    from keras_bert3.preprocessing.bert_text_preprocessor import BertTextPreprocessor

    preprocessor = BertTextPreprocessor(tokenizer, sequence_length=16)
    with pytest.warns(DeprecationWarning, match=r"front_end='texts'"):
        guessed = text_model(inputs_model(), preprocessor)
    assert guessed == text_model(inputs_model(), preprocessor, front_end="texts")
