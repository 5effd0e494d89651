"""A task defined outside keras_bert3 (a regression head: one score per
text) does everything the library's tasks do, with nothing in keras_bert3/
naming it: it fits, saves to a preset and loads back (by its class and by
`keras-bert3`'s loader), and exports to a SavedModel that takes strings and
to ONNX, both serving `predict`'s scores. What it declares is all the
library needs: its preprocessor class, its head layers, its `TaskSpec`
(writers by name or as functions) and its hooks."""

import json
import os

import keras
import numpy as np
import pytest

from keras_bert3.jobs.task_job import TaskJob
from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.bert_task import BertTask
from keras_bert3.models.task_parts import TaskSpec
from keras_bert3.models.task_parts import dense_head
from keras_bert3.models.task_parts import model_inputs
from keras_bert3.models.task_parts import task_preprocessor
from keras_bert3.preprocessing.bert_text_preprocessor import BertTextPreprocessor
from tests.real_sentences import real_sentences


def score_head(g, task, weights, sequence) -> dict:
    """The regressor's ONNX nodes: its dense layer on the pooled output, one score a text."""
    from keras_bert3.export.onnx_graph import dense_nodes
    from keras_bert3.export.onnx_graph import layer_weights
    from keras_bert3.export.onnx_graph import pooled_nodes

    score = dense_nodes(g, pooled_nodes(g, task, weights, sequence), *layer_weights(task.score_dense))
    return {"score": (score, ["batch", 1])}


class ScoreJob(TaskJob):
    """What the commands do with the regressor: JSON lines of `text` and `score` in; a score a row out; the mean
    squared error as the report."""

    def read(self, path: str, columns) -> dict:
        with open(path, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
        return {"texts": [row["text"] for row in rows], "scores": [row.get("score") for row in rows]}

    def label_names(self, examples) -> None:
        return None

    def new_task(self, preset: str, examples, label_names, config, **kwargs):
        return self.task_cls.from_preset(preset, sequence_length=config.sequence_length, **kwargs)

    def fit_data(self, examples, label_names):
        return examples["texts"], np.array(examples["scores"], "float32")  # One target a row: (n,).

    def served_inputs(self, examples) -> dict:
        return {"text": examples["texts"]}

    def input_columns(self, columns) -> dict:
        return {"text": columns.text_column or "text"}

    def preset_input_names(self, task) -> list[str]:
        return ["text"]

    def preset_outputs(self, task, inputs: dict) -> dict:
        return {"score": task.predict(inputs["text"], verbose=0)}

    def rows(self, outputs: dict, label_names) -> list[dict]:
        return [{"score": float(score[0])} for score in np.asarray(outputs["score"])]

    def report(self, examples, rows: list[dict], label_names) -> dict:
        errors = [(row["score"] - score) ** 2 for row, score in zip(rows, examples["scores"])]
        return {"mean_squared_error": float(np.mean(errors)), "examples": len(rows)}

    def report_lines(self, report: dict) -> list[str]:
        return [f"mean squared error {report['mean_squared_error']:.4f} ({report['examples']} examples)"]


@keras.saving.register_keras_serializable(package="keras_bert3_fifth_task_test")
class BertRegressor(BertTask):
    """One real number per text, `(batch, 1)`, from the pooled [CLS] output."""

    preprocessor_cls = BertTextPreprocessor
    spec = TaskSpec(
        saved_model_writer="export_text_classifier",  # One output row per text: that writer serves it.
        raw_inputs="texts (a list of strings)",
        preset_settings=("sequence_length",),
        takes_text_datasets=True,
        per_token_outputs=False,
        onnx_head=score_head,
        job=ScoreJob,  # The commands' part: a class here; "module:Class" works as well.
    )

    def __init__(self, backbone, *, tokenizer=None, preprocessor=None, sequence_length=128, **kwargs):
        preprocessor = task_preprocessor(type(self), backbone, preprocessor, tokenizer, sequence_length=sequence_length)
        self.backbone = backbone
        self.preprocessor = preprocessor
        self.score_dense = dense_head(backbone, 1, name="score")
        inputs = model_inputs()
        score = self.score_dense(backbone.pooled_output(inputs))  # (batch, 1), as Keras' regression metrics take it.
        super().__init__(inputs=inputs, outputs=score, **kwargs)
        self.compile()

    def default_loss(self):
        return keras.losses.MeanSquaredError()

    def default_metrics(self):
        return [keras.metrics.MeanAbsoluteError(name="mae")]

    def preprocess(self, x, y=None, sample_weight=None, *, batch_size=32, shuffle=False, keep_order=False):
        from keras_bert3.preprocessing.text_classification_dataset import text_classification_dataset

        y = None if y is None else np.asarray(y, "float32")
        options = dict(batch_size=batch_size, shuffle=shuffle, bucket=not keep_order, sample_weight=sample_weight)
        return text_classification_dataset(x, y, preprocessor=self.preprocessor, **options)

    def predict_examples(self, x, run) -> np.ndarray:
        batch = self.preprocessor(np.asarray(x, dtype=object))
        return run({name: value.numpy() for name, value in batch.items()})

    def serving_outputs(self, outputs) -> dict:
        return {"score": outputs}


@pytest.fixture(scope="module")
def fitted(tokenizer):
    """A small regressor fitted to score texts by their length."""
    keras.utils.set_random_seed(3)
    backbone = BertBackbone(
        vocabulary_size=tokenizer.vocabulary_size(), num_layers=2, num_heads=2, hidden_dim=32, intermediate_dim=64
    )
    regressor = BertRegressor(backbone, tokenizer=tokenizer, sequence_length=32)
    texts = real_sentences(64)
    scores = np.array([len(text.split()) / 10 for text in texts], "float32")  # (n,): one target a row.
    regressor.compile(learning_rate=1e-3)
    history = regressor.fit(texts, scores, batch_size=16, epochs=4, verbose=0)
    return regressor, texts, history.history


def test_the_fifth_task_fits(fitted):
    _, _, history = fitted
    assert np.all(np.isfinite(history["loss"]))
    assert history["loss"][-1] < history["loss"][0]


def test_the_fifth_task_saves_and_loads_as_a_preset(fitted, tmp_path):
    from keras_bert3.cli import load_task

    regressor, texts, _ = fitted
    regressor.save_to_preset(str(tmp_path / "preset"))
    expected = regressor.predict(texts[:8])
    assert expected.shape == (8, 1)
    for loaded in (BertRegressor.from_preset(str(tmp_path / "preset")), load_task(str(tmp_path / "preset"))):
        assert type(loaded) is BertRegressor
        assert loaded.preprocessor.sequence_length == 32
        np.testing.assert_allclose(loaded.predict(texts[:8]), expected, atol=1e-5, rtol=0)


@pytest.mark.slow
def test_the_fifth_task_serves_strings_as_a_saved_model_and_as_onnx(fitted, tmp_path):
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the tokenizer's ops)

    from keras_bert3.export.onnx_export import OnnxTextModel

    regressor, texts, _ = fitted
    expected = regressor.predict(texts[:8])
    regressor.export(str(tmp_path / "saved_model"), warmup=False)
    serve = tf.saved_model.load(str(tmp_path / "saved_model")).signatures["serving_default"]
    np.testing.assert_allclose(serve(text=tf.constant(texts[:8]))["score"].numpy(), expected, atol=1e-4, rtol=0)
    regressor.export(str(tmp_path / "onnx"), format="onnx")
    assert sorted(os.listdir(tmp_path / "onnx")) == [
        "keras_bert3_task.json",
        "model.onnx",
        "text_model.onnx",
        "tokenizer.json",
    ]
    served = OnnxTextModel(str(tmp_path / "onnx"))
    assert served.task == "BertRegressor"
    np.testing.assert_allclose(served(texts[:8])["score"], expected, atol=1e-4, rtol=0)


def test_presets_name_their_task_by_its_registered_name_and_old_ones_still_load(fitted, tokenizer, tmp_path):
    """task.json names the task's Keras registered name. A preset written
    before it did (class name only) still loads for keras_bert3's tasks; a
    task no imported module registered is refused, saying what to do."""
    import json

    from keras_bert3.cli import load_task
    from keras_bert3.models.bert_classifier import BertClassifier

    regressor, texts, _ = fitted
    regressor.save_to_preset(str(tmp_path / "regressor"))
    config_path = tmp_path / "regressor" / "task.json"
    stored = json.loads(config_path.read_text())
    assert stored["registered_name"] == "keras_bert3_fifth_task_test>BertRegressor"
    config_path.write_text(json.dumps({**stored, "registered_name": "elsewhere>BertRegressor"}))
    with pytest.raises(ValueError, match="names a task that no imported module registered: .* import the module"):
        load_task(str(tmp_path / "regressor"))

    classifier = BertClassifier(regressor.backbone, num_classes=2, tokenizer=tokenizer, sequence_length=32)
    classifier.save_to_preset(str(tmp_path / "classifier"))
    config_path = tmp_path / "classifier" / "task.json"
    stored = json.loads(config_path.read_text())
    del stored["registered_name"]  # As written before 2026-11-28.
    config_path.write_text(json.dumps(stored))
    loaded = load_task(str(tmp_path / "classifier"))
    assert type(loaded) is BertClassifier
    np.testing.assert_allclose(loaded.predict(texts[:4]), classifier.predict(texts[:4]), atol=1e-5, rtol=0)


@pytest.mark.slow
@pytest.mark.one_pass  # The commands' code is the same on either backend: the task's fit and exports on each are above.
def test_the_fifth_task_runs_through_the_commands_by_module_and_class(fitted, tmp_path, capsys):
    """`finetune --task tests.models.fifth_task_test:BertRegressor` on a backbone preset, then `evaluate` and
    `predict --input` on the fine-tuned preset, its SavedModel and its ONNX export: the same scores from each, and
    the report's error equal to one computed here from `predict`'s rows. Nothing in keras_bert3 names the task."""
    from keras_bert3.cli import main

    def run(*args) -> str:
        code = main([str(arg) for arg in args])
        printed, errors = capsys.readouterr()
        assert code == 0, errors[-3000:]
        return printed

    regressor, texts, _ = fitted
    regressor.backbone.save_to_preset(str(tmp_path / "backbone"))
    regressor.preprocessor.tokenizer.save_to_preset(str(tmp_path / "backbone"))
    rows = [{"text": text, "score": len(text.split()) / 10} for text in texts]
    for name, part in (("train", rows[:48]), ("test", rows[48:])):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in part), "utf-8")
    task = f"{__name__}:BertRegressor"
    finetuned = tmp_path / "finetuned"
    common = ["--epochs", "2", "--batch-size", "16", "--sequence-length", "32", "--learning-rate", "1e-3"]
    run("finetune", "--task", task, "--preset", tmp_path / "backbone", "--train", tmp_path / "train.jsonl",
        "--output", finetuned, *common)  # fmt: skip
    assert json.loads((finetuned / "task.json").read_text())["task"] == task
    run("export", "--model", finetuned, "--output", tmp_path / "saved_model", "--no-warmup")
    run("export", "--model", finetuned, "--output", tmp_path / "onnx", "--format", "onnx")
    scores = {}
    for form in ("finetuned", "saved_model", "onnx"):
        assert (
            json.loads(
                (tmp_path / form / ("task.json" if form == "finetuned" else "keras_bert3_task.json")).read_text()
            )["task"]
            == task
        )
        printed = run(
            "evaluate",
            "--model",
            tmp_path / form,
            "--data",
            tmp_path / "test.jsonl",
            "--report",
            tmp_path / f"{form}.json",
        )
        report = json.loads((tmp_path / f"{form}.json").read_text())
        assert f"mean squared error {report['mean_squared_error']:.4f}" in printed
        run(
            "predict",
            "--model",
            tmp_path / form,
            "--input",
            tmp_path / "test.jsonl",
            "--output",
            tmp_path / f"{form}.jsonl",
            "--prediction-prefix",
            "predicted_",
        )
        predicted = [json.loads(line) for line in (tmp_path / f"{form}.jsonl").read_text().splitlines()]
        scores[form] = np.array([row["predicted_score"] for row in predicted])
        truth = np.array([row["score"] for row in rows[48:]])
        assert report["mean_squared_error"] == pytest.approx(np.mean((scores[form] - truth) ** 2), abs=1e-6)
    np.testing.assert_allclose(scores["saved_model"], scores["finetuned"], atol=1e-4, rtol=0)
    np.testing.assert_allclose(scores["onnx"], scores["finetuned"], atol=1e-4, rtol=0)


def test_an_unknown_task_or_a_class_that_is_no_task_is_refused_in_one_line(tmp_path, capsys):
    from keras_bert3.cli import main
    from keras_bert3.models.built_in_tasks import BUILT_IN_TASKS

    (tmp_path / "train.jsonl").write_text('{"text": "A line.", "score": 1.0}\n', "utf-8")
    cases = {
        "regressor-of-dreams": f"--task regressor-of-dreams is no task: the commands run {', '.join(BUILT_IN_TASKS)}, "
        "or a task of your own as module:Class.",
        f"{__name__}:ScoreJob": f"--task {__name__}:ScoreJob: {__name__}:ScoreJob is not a task (a subclass of ",
        "no_such_module:Thing": "--task no_such_module:Thing: cannot import no_such_module:Thing (No module named",
    }
    for task, message in cases.items():
        arguments = ["finetune", "--task", task, "--preset", tmp_path, "--train", tmp_path / "train.jsonl"]
        code = main([str(argument) for argument in [*arguments, "--output", tmp_path / "out"]])
        errors = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(errors) == 1 and message in errors[0], (task, errors)
    assert not (tmp_path / "out").exists()


def test_a_package_registers_its_task_by_an_entry_point(tmp_path, monkeypatch):
    """An installed distribution's entry point of group `keras_bert3.tasks` names the task for `--task`: the
    distribution here is a real one on `sys.path` (its `.dist-info` with `entry_points.txt`), as pip writes it."""
    from keras_bert3.jobs.task_registry import ENTRY_POINT_GROUP
    from keras_bert3.jobs.task_registry import job_named
    from keras_bert3.jobs.task_registry import registered_tasks

    info = tmp_path / "score_tasks-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: score-tasks\nVersion: 1.0\n", "utf-8")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nscore = {__name__}:BertRegressor\n", "utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert registered_tasks()["score"] == f"{__name__}:BertRegressor"
    job = job_named("score")
    assert isinstance(job, ScoreJob) and job.task_cls is BertRegressor and job.name == "score"
