"""Every Python block of README.md and docs/*.md runs, in a fresh process on
Keras's default backend (TensorFlow: what a reader gets without setting
KERAS_BACKEND), on a tiny preset with MiniLM's real vocabulary, the embedded corpus and the
embedded labelled sets. The blocks' placeholders (preset paths, file names,
the user's data) are given by `PRELUDE` and `PLACEHOLDERS`; `CHEAPER` shortens
their training runs. Each replacement must occur in the text, so a block that
changes under them fails here instead of running something else.

The blocks run in one process, in order, as a reader runs them: over a
minute, for the training, SavedModel and ONNX exports they show."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

from tests.tiny_preset import write_tiny_preset

REPO = pathlib.Path(__file__).resolve().parent.parent
PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)

pytestmark = [pytest.mark.both_backends, pytest.mark.slow]  # A fresh process of the default backend; one pass.
# The backend of a reader who sets none. On JAX the blocks cost more CPU (each
# eager op and each step compiles: bench/history/, "Test suite"); the JAX
# paths they take are tested in the model, export and command tests.
DEFAULT_BACKEND = "tensorflow"

# The user's things a block names without making them.
PRELUDE = """
import keras_bert3
from keras_bert3 import BertPretrainer
from keras_bert3.data import pretraining_dataset
from keras_bert3_demo import default_corpus_path, docstring_code_tags, docstring_questions, docstring_topics

tokenizer = keras_bert3.BertTokenizer.from_preset(PRESET)
backbone = keras_bert3.BertBackbone.from_size("tiny", vocabulary_size=tokenizer.vocabulary_size(), max_sequence_length=512)
files = default_corpus_path()
topics, tags, squad = docstring_topics(), docstring_code_tags(), docstring_questions()["train"]
texts = topics["train_texts"][:200]
train_texts, train_labels = topics["train_texts"][:64], topics["train_labels"][:64]
val_texts, val_labels = topics["test_texts"][:32], topics["test_labels"][:32]
premises, hypotheses, labels = texts[:32], texts[32:64], [i % 3 for i in range(32)]
train_words, train_tags = tags["train_words"][:32], tags["train_tags"][:32]
questions, contexts, answers, starts = (squad[key][:16] for key in ("question", "context", "answer_text", "answer_start"))
passage = contexts[0]
"""

# Text in the blocks -> what runs here (each must occur in the blocks).
PLACEHOLDERS = {
    '"path/to/bert-base-uncased"': "PRESET",
    '"path/to/bert"': "PRESET",
    '"vocab.txt"': "VOCABULARY",
    '"corpus/*.txt"': "default_corpus_path()",
}
CHEAPER = {
    "steps_per_epoch=150, epochs=10": "steps_per_epoch=2, epochs=1",
    "steps_per_epoch=1000": "steps_per_epoch=2",
    "epochs=3": "epochs=1",
    "epochs=2": "epochs=1",
    "BatchingConfig(batch_size=32)": "BatchingConfig(batch_size=8)",
    "batch_size=32, drop_remainder=True": "batch_size=4, drop_remainder=True",
}
# Blocks that need something a test machine does not run, and where what they do is tested instead.
NOT_RUN = {
    "grpc.insecure_channel": "a TF Serving server (the request is the one tests/export sends to the serving runtime)",
}


def blocks() -> list[tuple[str, str]]:
    found = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for number, block in enumerate(PYTHON_BLOCK.findall(path.read_text(encoding="utf-8")), 1):
            found.append((f"{path.name} block {number}", block))
    return found


def runnable(block: str) -> str:
    for old, new in {**PLACEHOLDERS, **CHEAPER}.items():
        block = block.replace(old, new)
    return block


def test_every_replacement_meets_a_block_and_every_block_runs_or_says_why_not():
    text = "".join(block for _, block in blocks())
    assert [old for old in {**PLACEHOLDERS, **CHEAPER, **NOT_RUN} if old not in text] == []
    assert len(blocks()) >= 7


def test_the_blocks_run(tmp_path, minilm_dir):
    preset = write_tiny_preset(str(tmp_path / "preset"), minilm_dir, max_sequence_length=512)
    script = [f"PRESET = {preset!r}", f"VOCABULARY = {os.path.join(preset, 'vocabulary.txt')!r}", PRELUDE]
    names = []
    for name, block in blocks():
        if any(marker in block for marker in NOT_RUN):
            continue
        names.append(name)
        script.append(f"print('running {name}', flush=True)\nexec({runnable(block)!r}, dict(globals()))")
    script.append("print('all blocks ran', flush=True)")
    work = tmp_path / "work"  # The blocks write relative paths (my_bert, serving/1).
    work.mkdir()
    env = dict(
        os.environ,
        KERAS_BACKEND=DEFAULT_BACKEND,
        PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    )
    done = subprocess.run([sys.executable, "-c", "\n".join(script)], cwd=work, capture_output=True, text=True, env=env)
    assert done.returncode == 0 and done.stdout.rstrip().endswith("all blocks ran"), (
        done.stdout[-2000:] + done.stderr[-4000:]
    )
    assert [line[len("running ") :] for line in done.stdout.splitlines() if line.startswith("running ")] == names
    assert (work / "my_bert_hf" / "config.json").exists() and (work / "serving" / "1" / "saved_model.pb").exists()
