"""The file commands' bad input: each case one line naming the file and
line (or the label), exit 2, and nothing written under the output's name.
One pass: the refusals are the same code on either backend."""

import json

import pytest

from keras_bert3.cli import main

COLUMNS = ["--text-column", "sentence", "--label-column", "topic"]


def refused(capsys, *args) -> str:
    """Runs `keras-bert3 ARGS` in this process; its one error line (exit 2 asserted)."""
    capsys.readouterr()
    code = main([str(arg) for arg in args])
    errors = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(errors) == 1, errors
    return errors[0]


@pytest.fixture(scope="module")
def classifier(task_files, tmp_path_factory):
    output = tmp_path_factory.mktemp("bad_input") / "classifier"
    args = ["finetune", "--preset", task_files / "pretrained", "--train", task_files / "train.csv", *COLUMNS]
    assert (
        main([str(a) for a in [*args, "--output", output, "--epochs", 1, "--sequence-length", 32, "--verbose", 0]]) == 0
    )
    return output


@pytest.mark.slow
@pytest.mark.one_pass
def test_predict_files_refuse_bad_rows_and_existing_outputs(classifier, tmp_path, capsys):
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"sentence": "Return the path."}) + "\n" + json.dumps({"text": "No sentence."}) + "\n")
    output = tmp_path / "out.csv"
    line = refused(
        capsys, "predict", "--model", classifier, "--input", rows, "--text-column", "sentence", "--output", output
    )
    assert line.startswith(f"keras-bert3 predict: {rows}, line 2: no column 'sentence'")
    assert list(tmp_path.iterdir()) == [rows]  # No output, no partial file.
    rows = tmp_path / "rows.txt"
    rows.write_text("Return the path.\nOpen the file.\n")  # Plain text, one text a line.
    assert (
        main([str(a) for a in ["predict", "--model", classifier, "--input", rows, "--output", output, "--verbose", 0]])
        == 0
    )
    assert output.read_text().splitlines()[0] == "text,label,probability" and len(output.read_text().splitlines()) == 3
    line = refused(capsys, "predict", "--model", classifier, "--input", rows, "--output", output)
    assert (
        line
        == f"keras-bert3 predict: --output {output} exists: give --overwrite to replace it, or another name. (--debug shows where)"
    )
    assert (
        main(
            [
                str(a)
                for a in [
                    "predict",
                    "--model",
                    classifier,
                    "--input",
                    rows,
                    "--output",
                    output,
                    "--overwrite",
                    "--verbose",
                    0,
                ]
            ]
        )
        == 0
    )


@pytest.mark.slow
@pytest.mark.one_pass
def test_labels_the_model_does_not_know_are_named(classifier, task_files, tmp_path, capsys):
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"sentence": "Return the path.", "topic": "astronomy"}) + "\n")
    line = refused(capsys, "evaluate", "--model", classifier, "--data", data, *COLUMNS, "--report", tmp_path / "r.json")
    assert f"{data} has labels the model at {classifier} does not know: 'astronomy'" in line
    assert not (tmp_path / "r.json").exists()
    line = refused(
        capsys,
        "finetune",
        "--preset",
        task_files / "pretrained",
        "--train",
        task_files / "train.csv",
        "--validation",
        data,
        *COLUMNS,
        "--output",
        tmp_path / "model",
    )
    assert f"{data} has labels the training file lacks: 'astronomy'" in line and not (tmp_path / "model").exists()


@pytest.mark.backend_free  # Refused before any model is built.
def test_a_missing_column_flag_and_patience_without_validation_are_named(task_files, tmp_path, capsys):
    args = [
        "finetune",
        "--preset",
        task_files / "pretrained",
        "--train",
        task_files / "train.csv",
        "--output",
        tmp_path / "m",
    ]
    assert refused(capsys, *args, "--text-column", "sentence").startswith(
        "keras-bert3 finetune: --task classifier reads the file's columns: give --label-column."
    )
    assert "--patience watches the validation score: give --validation too" in refused(
        capsys, *args, *COLUMNS, "--patience", 2
    )


@pytest.mark.backend_free  # Refused before any model is loaded: every job's reader, evaluate and predict.
def test_files_and_models_that_cannot_serve_are_named_before_any_model_loads(task_files, tmp_path, capsys):
    bad = tmp_path / "bad.conll"
    bad.write_text("EU B-ORG\nrejects\n", "utf-8")
    args = ["finetune", "--preset", task_files / "pretrained", "--output", tmp_path / "m", "--train"]
    assert f"{bad}, line 2: 'rejects' has no tag" in refused(capsys, *args, bad, "--task", "token-classifier")
    squad = tmp_path / "bad.json"
    squad.write_text('{"data": 3}', "utf-8")
    assert f"{squad} is not SQuAD JSON (no `data` list)." in refused(
        capsys, *args, squad, "--task", "question-answerer"
    )
    missing = tmp_path / "no_model"
    assert f"{missing} does not exist" in refused(capsys, "evaluate", "--model", missing, "--data", bad)
    line = refused(capsys, "predict", "--model", missing, "--input", bad, "--output", tmp_path / "out.txt")
    assert line.startswith(f"keras-bert3 predict: --output {tmp_path / 'out.txt'}: name a .csv or .jsonl file")
    assert not (tmp_path / "m").exists() and not (tmp_path / "m.checkpoints").exists()


@pytest.mark.slow
@pytest.mark.one_pass
def test_damaged_exports_are_named_by_their_file(classifier, tmp_path, capsys):
    """A SavedModel whose variables' data is truncated, an ONNX export whose
    `text_model.onnx` is truncated: `predict` names the file, exit 2, and
    writes nothing."""
    import glob
    import shutil

    for form, flags in (("saved_model", ["--no-warmup"]), ("onnx", ["--format", "onnx"])):
        export = tmp_path / form
        assert main([str(a) for a in ["export", "--model", classifier, "--output", export, *flags]]) == 0
        capsys.readouterr()
        damaged = (
            glob.glob(str(export / "variables" / "variables.data-*"))[0]
            if form == "saved_model"
            else export / "text_model.onnx"
        )
        data = open(damaged, "rb").read()
        with open(damaged, "wb") as f:
            f.write(data[: len(data) // 2])
        rows, output = tmp_path / "rows.txt", tmp_path / f"{form}.csv"
        rows.write_text("Return the path.\n")
        line = refused(capsys, "predict", "--model", export, "--input", rows, "--output", output)
        assert line.startswith(f"keras-bert3 predict: {damaged} is damaged"), line
        assert not output.exists() and not glob.glob(f"{output}.*")
        shutil.rmtree(export)
