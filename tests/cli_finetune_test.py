"""keras-bert3 finetune / export / predict on bad input and damaged presets,
with real labelled text (a tiny backbone with MiniLM's real vocabulary, so a
run is short). The commands run in this process through
`keras_bert3.cli.main`, as the console script calls it (`python -m
keras_bert3` runs in tests/training/pretraining_run_test.py). The whole job,
fine-tuning to every export and prediction, runs in
tests/jobs/task_commands_test.py."""

import csv
import json
import os

import pytest

from keras_bert3.cli import main
from keras_bert3.preprocessing.labelled_files import read_labelled_file
from keras_bert3_demo.docstring_topics import docstring_topics
from tests.tiny_preset import write_tiny_preset


def cli(capsys, *args) -> str:
    """Runs `keras-bert3 ARGS` in this process; returns what it printed."""
    code = main(list(args))
    printed, errors = capsys.readouterr()
    assert code == 0, errors[-3000:]
    return printed


@pytest.fixture(scope="module")
def files(tmp_path_factory, minilm_dir):
    root = tmp_path_factory.mktemp("cli")
    data = docstring_topics()
    names = data["class_names"]
    with open(root / "train.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, ["sentence", "topic"])
        writer.writeheader()
        for text, label in zip(data["train_texts"][:48], data["train_labels"][:48]):
            writer.writerow({"sentence": text, "topic": names[label]})
    with open(root / "validation.jsonl", "w", encoding="utf-8") as f:
        for text, label in zip(data["test_texts"][:16], data["test_labels"][:16]):
            f.write(json.dumps({"sentence": text, "topic": names[label]}) + "\n")
    write_tiny_preset(str(root / "pretrained"), minilm_dir)
    return root


@pytest.mark.backend_free
def test_export_options_that_do_not_apply_are_refused(files, capsys):
    """--quantize is for ONNX exports, --dtype bfloat16 for SavedModels: each
    refused with the other format, before anything is loaded or written."""
    for flags, message in [
        (["--quantize", "int8"], "--quantize int8 applies to --format onnx only"),
        (["--format", "onnx", "--dtype", "bfloat16"], "--dtype bfloat16 applies to the SavedModel"),
    ]:
        output = files / "refused"
        assert main(["export", "--model", str(files / "pretrained"), "--output", str(output), *flags]) == 2
        assert message in capsys.readouterr().err and not output.exists()


@pytest.mark.backend_free
def test_topics_writes_the_embedded_labelled_set(tmp_path):
    assert main(["topics", "--output", str(tmp_path)]) == 0
    data = docstring_topics()
    texts, _, labels = read_labelled_file(str(tmp_path / "test.csv"), "text", "label")
    assert texts == data["test_texts"]
    assert labels == [data["class_names"][i] for i in data["test_labels"]]


@pytest.mark.backend_free
def test_missing_label_column_is_a_clear_error(files, capsys):
    with pytest.raises(ValueError, match="no column 'label'"):
        read_labelled_file(str(files / "train.csv"), "sentence", "label")
    code = main(
        [
            "finetune",
            "--preset",
            str(files / "pretrained"),
            "--train",
            str(files / "train.csv"),
            "--text-column",
            "sentence",
            "--label-column",
            "label",
            "--output",
            str(files / "x"),
        ]
    )
    assert code == 2 and "no column 'label'" in capsys.readouterr().err


def bad_files(root) -> dict:
    """One training file per bad input `finetune` must refuse before building a model, and its message."""
    data = docstring_topics()
    good = [
        {"sentence": text, "topic": data["class_names"][label]}
        for text, label in zip(data["train_texts"][:8], data["train_labels"][:8])
    ]
    cases = {
        "labels.csv": (
            [dict(row, topic=name) for row, name in zip(good, ["pos", " pos", "Pos", "POS", "neg"] * 2)],
            r"differ only by case or spaces: 'pos', ' pos', 'Pos', 'POS'",
        ),
        "missing_label.csv": (
            good[:3] + [{"sentence": good[3]["sentence"]}] + good[4:],
            r"missing_label\.csv, line 5: the label \('topic'\) is missing",
        ),
        "missing_label.jsonl": (
            good[:2] + [{"sentence": "no topic here"}],
            r"missing_label\.jsonl, line 3: the label \('topic'\) is missing",
        ),
        "bad.jsonl": (good[:5] + ['{"sentence": "cut off'], r"bad\.jsonl, line 6: not valid JSON"),
    }
    # A Latin-1 export of 3,000 rows, one word with an accent on line 2,702: named by line and column.
    rows = [
        {"sentence": text, "topic": data["class_names"][label]}
        for text, label in zip(data["train_texts"] * 3, data["train_labels"] * 3)
        if text.isascii()
    ][:3000]
    rows[2700] = dict(rows[2700], sentence="Return the caf\u00e9 menu as a list.")
    with open(root / "latin1.csv", "w", newline="", encoding="latin-1") as f:
        writer = csv.DictWriter(f, ["sentence", "topic"])
        writer.writeheader()
        writer.writerows(rows)
    paths = {
        "latin1.csv": (
            root / "latin1.csv",
            r"latin1\.csv, line 2702, column 15: byte 0xe9 is not UTF-8 .*iconv -f latin1 -t utf-8",
        )
    }
    for name, (rows, message) in cases.items():
        path = root / name
        with open(path, "w", newline="", encoding="utf-8") as f:
            if name.endswith(".csv"):
                writer = csv.DictWriter(f, ["sentence", "topic"])
                writer.writeheader()
                writer.writerows(rows)
            else:
                f.write("\n".join(row if isinstance(row, str) else json.dumps(row) for row in rows) + "\n")
        paths[name] = (path, message)
    return paths


@pytest.mark.backend_free
def test_bad_training_files_are_one_line_errors_with_file_and_line(files, capsys):
    import re

    for name, (path, message) in bad_files(files).items():
        code = main(
            [
                "finetune",
                "--preset",
                str(files / "pretrained"),
                "--train",
                str(path),
                "--text-column",
                "sentence",
                "--label-column",
                "topic",
                "--output",
                str(files / "never"),
            ]
        )
        printed, errors = capsys.readouterr()
        assert code == 2, (name, errors)
        lines = errors.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("keras-bert3 finetune: ") and re.search(message, lines[0]), (
            name,
            errors,
        )
        assert not os.path.exists(files / "never")  # Refused before any model was built or written.


def test_export_loads_the_task_a_preset_holds(files, minilm_dir, tmp_path):
    from keras_bert3.cli import load_task
    from keras_bert3.models.bert_backbone import BertBackbone
    from keras_bert3.models.bert_question_answerer import BertQuestionAnswerer
    from keras_bert3.models.bert_token_classifier import BertTokenClassifier
    from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer

    preset = str(files / "pretrained")
    with pytest.raises(ValueError, match="not a fine-tuned preset"):
        load_task(preset)
    backbone, tokenizer = BertBackbone.from_preset(preset), BertTokenizer.from_preset(preset)
    for task in (
        BertTokenClassifier(backbone, 3, tokenizer=tokenizer, sequence_length=32),
        BertQuestionAnswerer(backbone, tokenizer=tokenizer, sequence_length=64, doc_stride=16, max_query_length=16),
    ):
        task.save_to_preset(str(tmp_path / type(task).__name__))
        assert type(load_task(str(tmp_path / type(task).__name__))) is type(task)


@pytest.mark.backend_free
def test_predict_on_a_preset_never_fine_tuned_says_how_to_fine_tune_it(files, capsys):
    preset = str(files / "pretrained")
    assert main(["predict", "--model", preset, "Open the URL."]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"keras-bert3 predict: {preset} is not a fine-tuned preset"), lines
    assert f"keras-bert3 finetune --preset {preset} --train FILE" in lines[0]  # A command, not a Python argument.


@pytest.mark.backend_free
def test_user_errors_from_tensorflow_are_one_line_and_internal_errors_are_not():
    """TensorFlow's missing-file errors and the input pipeline's own checks are
    the user's to fix (one line); any other error keeps its traceback (None)."""
    import tensorflow as tf

    from keras_bert3.cli import user_error_line

    with pytest.raises(tf.errors.NotFoundError) as missing:
        tf.io.read_file("/nonexistent/corpus.txt").numpy()
    assert "/nonexistent/corpus.txt" in user_error_line(missing.value)

    def checked(value):  # An input pipeline's check, as tf.data runs it (a graph).
        with tf.control_dependencies(
            [tf.debugging.Assert(value > 0, ["The corpus has a single document: add documents."])]
        ):
            return tf.identity(value)

    with pytest.raises(tf.errors.InvalidArgumentError) as check:
        list(tf.data.Dataset.from_tensors(0).map(checked))
    assert user_error_line(check.value) == "The corpus has a single document: add documents."
    with pytest.raises(tf.errors.InvalidArgumentError) as internal:
        tf.reshape(tf.zeros([6]), [4]).numpy()
    assert user_error_line(internal.value) is None
    assert user_error_line(KeyError("internal")) is None


@pytest.mark.slow
def test_damaged_presets_and_missing_paths_are_named(files, capsys, tmp_path):
    """A fine-tuned preset whose weights files were cut short (a copy
    stopped midway) or come from another model, and a path that does not exist."""
    import re
    import shutil

    from keras_bert3.models.bert_backbone import BertBackbone
    from keras_bert3.models.bert_classifier import BertClassifier

    preset = tmp_path / "classifier"
    BertClassifier.from_preset(str(files / "pretrained"), num_classes=3, sequence_length=32).save_to_preset(str(preset))
    cases = []
    for name in ("model.weights.h5", "task_head.weights.h5"):
        damaged = tmp_path / f"cut-{name}"
        shutil.copytree(preset, damaged)
        data = (preset / name).read_bytes()
        (damaged / name).write_bytes(data[: len(data) // 2])
        cases.append(
            (damaged, rf"{damaged}/{name} cannot be read as a weights file \(.*\): it is truncated or damaged")
        )
    foreign = tmp_path / "foreign"
    shutil.copytree(preset, foreign)
    BertBackbone.from_size("tiny", vocabulary_size=30522, max_sequence_length=64).save_to_preset(
        str(tmp_path / "other")
    )
    shutil.copy(tmp_path / "other" / "model.weights.h5", foreign / "model.weights.h5")
    cases.append((foreign, rf"{foreign}/model.weights.h5 holds weights that do not fit this model"))
    cases.append(
        (tmp_path / "no" / "such", rf"{tmp_path}/no/such does not exist \(nor does the folder {tmp_path}/no\)")
    )
    for path, message in cases:
        assert main(["predict", "--model", str(path), "Open the URL."]) == 2
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("keras-bert3 predict: ") and re.search(message, lines[0]), (
            path,
            lines,
        )
