"""`keras-bert3 finetune`'s settings as Hugging Face users give them: gradient accumulation equal to the whole batch,
the best weights chosen on the validation report's figure, checkpoints every N steps kept and resumed from, TensorBoard
logs and curves, the question answerer's windows as Hugging Face's tokenizer cuts them, Hugging Face's spellings and a
JSON file of flags."""

import csv
import dataclasses
import json
import shutil
import sys

import numpy as np
import pytest

from keras_bert3.cli import build_parser
from keras_bert3.cli import main
from keras_bert3.data.setting_fields import from_flags
from keras_bert3.flag_files import with_config_file
from keras_bert3.jobs.evaluation import evaluate
from keras_bert3.training.finetuning_config import FinetuningConfig
from keras_bert3_demo.docstring_questions import docstring_questions
from keras_bert3_demo.labelled_sets import write_squad
from tests.jobs.finetune_resume_test import weights
from tests.reference import import_reference
from tests.tiny_preset import write_tiny_preset

# Hugging Face's spellings of flags that keras-bert3 finetune has: TrainingArguments', and those of the argument
# classes of run_glue.py, run_ner.py and run_qa.py (transformers' examples/pytorch), with a value each.
HUGGING_FACE_FLAGS = {
    "--output_dir": "out",
    "--num_train_epochs": "2",
    "--per_device_train_batch_size": "16",
    "--learning_rate": "3e-5",
    "--weight_decay": "0.0",
    "--warmup_ratio": "0.06",
    "--warmup_steps": "10",
    "--lr_scheduler_type": "cosine",
    "--gradient_accumulation_steps": "2",
    "--max_steps": "100",
    "--label_smoothing_factor": "0.1",
    "--seed": "42",
    "--metric_for_best_model": "f1",
    "--eval_steps": "50",
    "--save_steps": "50",
    "--save_total_limit": "2",
    "--model_name_or_path": "bert",  # ModelArguments
    "--train_file": "train.csv",  # DataTrainingArguments (run_glue.py, run_ner.py, run_qa.py)
    "--validation_file": "validation.csv",
    "--max_seq_length": "384",
    "--text_column_name": "tokens",  # run_ner.py
    "--label_column_name": "ner_tags",
    "--doc_stride": "128",  # run_qa.py
    "--n_best_size": "20",
    "--max_answer_length": "30",
}
# Each flag's setting, as the flags above give it.
SETTINGS = {
    "output": "out",
    "epochs": 2,
    "batch_size": 16,
    "learning_rate": 3e-5,
    "weight_decay": 0.0,
    "warmup_ratio": 0.06,
    "warmup_steps": 10,
    "schedule": "cosine",
    "gradient_accumulation_steps": 2,
    "max_steps": 100,
    "label_smoothing": 0.1,
    "seed": 42,
    "metric_for_best": "f1",
    "eval_steps": 50,
    "save_steps": 50,
    "keep_checkpoints": 2,
    "preset": "bert",
    "train": "train.csv",
    "validation": "validation.csv",
    "sequence_length": 384,
    "text_column": "tokens",
    "label_column": "ner_tags",
    "doc_stride": 128,
    "n_best": 20,
    "max_answer_length": 30,
}


def finetune_config(argv) -> FinetuningConfig:
    return from_flags(FinetuningConfig, with_config_file(build_parser(), ["finetune", *argv]))


@pytest.mark.backend_free
def test_hugging_face_spellings_and_a_json_file_of_flags(tmp_path):
    """Each Hugging Face flag sets its setting; a JSON file of flags (`--config`, any spelling) too, the command line's
    flags winning; a key that is no flag is refused naming it."""
    config = finetune_config([word for pair in HUGGING_FACE_FLAGS.items() for word in pair])
    assert {name: getattr(config, name) for name in SETTINGS} == SETTINGS
    flags = tmp_path / "args.json"
    flags.write_text(json.dumps({k.lstrip("-"): v for k, v in HUGGING_FACE_FLAGS.items()} | {"--batch-size": 8}))
    config = finetune_config(["--config", str(flags), "--seed", "7"])
    assert {name: getattr(config, name) for name in SETTINGS} == SETTINGS | {"batch_size": 8, "seed": 7}
    flags.write_text(json.dumps({"preset": "bert", "train": "t.csv", "output": "o", "per_device_eval_batch_size": 8}))
    with pytest.raises(SystemExit):
        finetune_config(["--config", str(flags)])


@pytest.mark.backend_free
def test_help_shows_each_default(capsys):
    with pytest.raises(SystemExit):
        main(["finetune", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    for help_and_default in (
        "texts a step (default: 32)",
        "passes over the training file (default: 3)",
        "(default: linear)",
    ):
        assert help_and_default in shown
    assert "(default: None)" not in shown


def short_questions(count: int) -> dict:
    """The first `count` training questions whose passage (20 words at most) makes one window of 64 tokens."""
    data = docstring_questions()["train"]
    kept = [i for i, context in enumerate(data["context"]) if len(context.split()) <= 20][:count]
    return {name: [values[i] for i in kept] for name, values in data.items()}


@pytest.mark.slow
def test_accumulated_steps_update_the_weights_as_the_whole_batch(tmp_path, minilm_dir):
    """`--batch-size 4 --gradient-accumulation-steps 4` (and `--max-steps 4`): the weights of `--batch-size 16` after
    the same 4 updates (a question answerer on a backbone without dropout: no randomness in the step; 32 one-window
    questions). The
    gradients agree to float rounding; Adam divides each by its own size (plus 1e-6), which turns the rounding of the
    gradients that are zero but for it (a bias the softmax cancels, a key's shift) into up to a step's size: the
    tolerance is a quarter of a step (the learning rate), where updates on other batches differ by several steps."""
    write_tiny_preset(str(tmp_path / "pretrained"), minilm_dir, dropout=0.0)
    write_squad(tmp_path / "train.json", short_questions(32))
    learning_rate = 1e-3
    common = ["finetune", "--task", "question-answerer", "--preset", str(tmp_path / "pretrained"), "--train"]
    common += [str(tmp_path / "train.json"), "--epochs", "2", "--sequence-length", "64", "--verbose", "0"]
    common += ["--learning-rate", str(learning_rate)]
    assert main([*common, "--output", str(tmp_path / "whole"), "--batch-size", "16"]) == 0
    parts = ["--output", str(tmp_path / "parts"), "--batch-size", "4", "--gradient_accumulation_steps", "4"]
    assert main([*common, *parts, "--max-steps", "4"]) == 0  # Optimizer steps: the 2 epochs of batches of 16.
    whole, parts = weights(tmp_path / "whole"), weights(tmp_path / "parts")
    assert whole.keys() == parts.keys() and len(whole) > 10
    for key, value in whole.items():
        np.testing.assert_allclose(parts[key], value, atol=learning_rate / 4, rtol=0, err_msg=str(key))
    steps = [
        [row["step"] for row in csv.DictReader(open(tmp_path / run / "finetuning_history.csv"))]
        for run in ("whole", "parts")
    ]
    assert steps[0] == steps[1] == ["2", "4"]


def history(preset) -> list[dict]:
    with open(preset / "finetuning_history.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def event_tags(folder) -> set[str]:
    """The scalar tags of the TensorBoard event files under `folder`."""
    import tensorflow as tf

    tags = set()
    for path in folder.rglob("events.out.tfevents.*"):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            tags |= {value.tag for value in event.summary.value}
    return tags


@pytest.mark.slow
@pytest.mark.one_pass
def test_the_best_entity_f1_is_kept_and_a_run_resumes_from_an_older_checkpoint(task_files, tmp_path):
    """A tagger scored every 2 steps (`--eval-steps`) whose entity F1 and token accuracy peak at different scores:
    the preset has the weights of the best entity F1 (`--metric-for-best f1`), its history every score, TensorBoard
    logs and curves beside it. `--save-steps 1 --keep-checkpoints 3` keeps the newest three checkpoints; with the
    newest removed, the same command goes on from the one before and ends with the same history."""
    output = tmp_path / "tagger"
    args = [
        "finetune",
        "--task",
        "token-classifier",
        "--preset",
        str(task_files / "pretrained"),
        "--output",
        str(output),
    ]
    args += ["--train", str(task_files / "train.conll"), "--validation", str(task_files / "validation.conll")]
    args += [
        "--epochs",
        "2",
        "--batch-size",
        "16",
        "--sequence-length",
        "32",
        "--learning-rate",
        "3e-3",
        "--verbose",
        "0",
    ]
    args += ["--eval-steps", "2", "--metric-for-best", "f1", "--save-steps", "1", "--keep-checkpoints", "3"]
    assert main(args) == 0
    rows = history(output)
    assert [row["step"] for row in rows] == ["2", "4", "6", "8"]
    f1, token_accuracy = ([float(row[f"val_{name}"]) for row in rows] for name in ("f1", "token_accuracy"))
    assert np.argmax(f1) != np.argmax(token_accuracy), (f1, token_accuracy)
    report = evaluate(str(output), str(task_files / "validation.conll"), FinetuningConfig())
    assert report["f1"] == pytest.approx(max(f1), abs=1e-9) and report["token_accuracy"] < max(token_accuracy)
    assert {"epoch_loss", "epoch_learning_rate", "epoch_f1", "epoch_token_accuracy"} <= event_tags(output / "logs")
    assert (output / "training_curves.png").read_bytes()[:4] == b"\x89PNG"
    backup = tmp_path / "tagger.checkpoints" / "backup"
    assert sorted(p.name for p in backup.iterdir()) == ["checkpoint-3", "checkpoint-3+1", "checkpoint-4"]
    shutil.rmtree(backup / "checkpoint-4")  # The newest: the run goes on from the step before.
    shutil.move(output, tmp_path / "first")
    assert main(args) == 0
    assert history(output) == history(tmp_path / "first")


@pytest.mark.one_pass
def test_the_answerer_flags_cut_windows_as_hugging_face(task_files, minilm_dir):
    """`--max_seq_length` and `--doc_stride` (and our spellings) make the windows Hugging Face's tokenizer makes with
    `max_length`, `stride` and `return_overflowing_tokens` (run_qa.py's), on passages of several windows; the task
    keeps them, and `--max-answer-length` and `--n-best`, in its config (its preset's and exports')."""
    from keras_bert3.jobs.task_registry import job_named

    tokenizer = import_reference("transformers").BertTokenizerFast.from_pretrained(minilm_dir)
    data = docstring_questions()["test"]
    questions = [q for q in data["question"] if len(q.split()) <= 6][:6]
    contexts = [" ".join(data["context"][i : i + 8]) for i in range(0, 48, 8)]  # Several passages each.
    job, windows = job_named("question-answerer"), []
    for flags in (["--max_seq_length", "48", "--doc_stride", "8"], ["--sequence-length", "64", "--doc-stride", "24"]):
        config = finetune_config(["--preset", str(task_files / "pretrained"), "--train", "t", "--output", "o", *flags])
        config = dataclasses.replace(config, max_answer_length=20, n_best=10)
        task = job.new_task(config.preset, job.read(str(task_files / "train.json"), config), None, config)
        features = task.preprocessor((questions, contexts))
        expected = tokenizer(
            questions,
            contexts,
            truncation="only_second",
            max_length=config.sequence_length,
            stride=config.doc_stride,
            return_overflowing_tokens=True,
        )["input_ids"]
        ours = np.asarray(features["token_ids"])
        assert [ours[w, : len(ids)].tolist() for w, ids in enumerate(expected)] == expected and len(ours) == len(
            expected
        )
        settings = task.task_config()  # What its preset stores, and its exports read.
        assert (settings["doc_stride"], settings["max_answer_length"], settings["n_best"]) == (
            config.doc_stride,
            20,
            10,
        )
        windows.append(len(expected))
    assert windows[0] > windows[1] > len(questions)


@pytest.mark.slow
def test_a_strategy_over_two_devices_gives_the_history_of_one(tmp_path, minilm_dir):
    """`--strategy mirrored --devices 2` (TensorFlow) or `data_parallel` (JAX) on two virtual CPU devices: each
    batch split in two, the losses of no strategy (a backbone without dropout)."""
    import keras

    from tests import warm_commands
    from tests.training.pretrain_command import REPO

    write_tiny_preset(str(tmp_path / "pretrained"), minilm_dir, dropout=0.0)
    write_squad(tmp_path / "train.json", short_questions(32))
    strategy = "mirrored" if keras.backend.backend() == "tensorflow" else "data_parallel"
    command = [sys.executable, "-m", "tests.jobs.finetune_on_devices", str(tmp_path / "pretrained")]
    command += [str(tmp_path / "train.json"), str(tmp_path / "runs"), strategy]
    result = warm_commands.run(command, cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    runs = {name: history(tmp_path / "runs" / name) for name in ("none", strategy)}
    references = ["none"]
    for reference in references:
        assert [row["step"] for row in runs[reference]] == [row["step"] for row in runs[strategy]] == ["4", "8"]
        for name in ("loss", "start_logits_loss", "end_logits_loss"):
            ours, theirs = ([float(row[name]) for row in runs[run]] for run in (strategy, reference))
            np.testing.assert_allclose(ours, theirs, rtol=2e-5, err_msg=f"{name} against {reference}")
