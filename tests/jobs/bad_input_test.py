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


@pytest.mark.slow
@pytest.mark.one_pass
@pytest.mark.parametrize("name", ["class_names.json", "task.json", "config.json", "tokenizer.json"])
def test_copied_model_a_truncated_json_file_is_named(classifier, tmp_path, capsys, name):
    """A fine-tuned model copied in part: one of its JSON files cut short. `predict` names that file and says
    what to do, instead of the decoder's "Unterminated string starting at: line 3 column 5"."""
    import shutil

    copy = tmp_path / "copied"
    shutil.copytree(classifier, copy)
    damaged = copy / name
    text = damaged.read_text(encoding="utf-8")
    damaged.write_text(text[: len(text) // 2], encoding="utf-8")
    line = refused(capsys, "predict", "--model", copy, "Return the path.")
    assert line.startswith(f"keras-bert3 predict: {damaged} is not valid JSON ("), line
    assert "): it is truncated or damaged. Copy or download it again." in line, line


@pytest.mark.backend_free
def test_messy_file_a_batch_size_of_zero_is_refused_before_any_model_loads(task_files, tmp_path, capsys):
    """`--batch-size 0` was read as "the whole file at once" by `predict` and as 32 by `finetune` (which
    recorded 0 in its settings); now both refuse it, naming the flag, before reading a model."""
    output = tmp_path / "out.csv"
    line = refused(capsys, "predict", "--model", tmp_path / "no-model", "--batch-size", 0, "Return the path.")
    assert line.startswith("keras-bert3 predict: --batch-size 0: give a whole number of at least 1."), line
    args = ["finetune", "--preset", tmp_path / "no-preset", "--train", task_files / "train.csv", *COLUMNS]
    for flag in ("--batch-size", "--epochs", "--sequence-length"):
        line = refused(capsys, *args, "--output", output, flag, 0)
        assert line.startswith(f"keras-bert3 finetune: {flag} 0: give a whole number of at least 1."), line
    assert not output.exists() and not (tmp_path / "out.csv.checkpoints").exists()


@pytest.mark.backend_free  # Refused before any model loads, and before the run's checkpoint folder is made.
def test_messy_file_squad_with_only_unanswerable_questions_is_named(tmp_path, capsys):
    """SQuAD v2.0 whose questions are all unanswerable (`is_impossible`, no answers, or a converter's
    `{"text": "", "answer_start": -1}`) gave a `ShuffleDataset` traceback after the model loaded."""
    qas = [
        {"id": "a", "question": "Who?", "answers": [], "is_impossible": True},
        {"id": "b", "question": "When?", "answers": [{"text": "", "answer_start": -1}]},
    ]
    squad = tmp_path / "unanswerable.json"
    squad.write_text(json.dumps({"version": "v2.0", "data": [{"paragraphs": [{"context": "It ran.", "qas": qas}]}]}))
    output = tmp_path / "m"
    args = ["finetune", "--preset", tmp_path / "no-preset", "--output", output, "--task", "question-answerer"]
    line = refused(capsys, *args, "--train", squad)
    assert line.startswith(f"keras-bert3 finetune: {squad} has 2 questions and none with an answer: "), line
    assert not output.exists() and not (tmp_path / "m.checkpoints").exists()


@pytest.mark.backend_free  # Refused before any model loads, and before the run's checkpoint folder is made.
def test_messy_file_a_single_class_is_named_with_its_label(tmp_path, capsys):
    """A training file whose rows all have one label was refused only after the model loaded, as
    "num_classes=1", naming neither the file nor the label."""
    train = tmp_path / "one_label.csv"
    train.write_text("sentence,topic\nReturn the path.,files\nOpen the file.,files\n", "utf-8")
    output = tmp_path / "m"
    args = ["finetune", "--preset", tmp_path / "no-preset", "--train", train, *COLUMNS, "--output", output]
    line = refused(capsys, *args)
    assert line.startswith(f"keras-bert3 finetune: {train}: every row has the label 'files', and a classifier"), line
    assert not output.exists() and not (tmp_path / "m.checkpoints").exists()


@pytest.mark.slow
@pytest.mark.one_pass
def test_messy_file_an_input_column_named_as_a_prediction_is_never_written_over(classifier, tmp_path, capsys):
    """`predict --input` on a test file with a `label` column wrote its prediction over the user's labels.
    Now refused naming the column; `--prediction-prefix` puts the predictions beside it."""
    import csv

    rows = tmp_path / "test.csv"
    rows.write_text("sentence,label\nReturn the path.,files\nOpen the file.,files\n", "utf-8")
    output = tmp_path / "out.csv"
    args = ["predict", "--model", classifier, "--input", rows, "--text-column", "sentence", "--output", output]
    line = refused(capsys, *args)
    assert line.startswith(
        f"keras-bert3 predict: {rows}, line 2: the column 'label' has the name of a prediction field (label, "
        "probability), which predict would write over it. Give --prediction-prefix"
    ), line
    assert list(tmp_path.iterdir()) == [rows]
    assert main([str(a) for a in [*args, "--prediction-prefix", "predicted_", "--verbose", 0]]) == 0
    with open(output, newline="", encoding="utf-8") as f:
        written = list(csv.DictReader(f))
    assert [row["label"] for row in written] == ["files", "files"]
    assert list(written[0]) == ["sentence", "label", "predicted_label", "predicted_probability"]


@pytest.mark.slow
@pytest.mark.one_pass
def test_copied_model_without_class_names_or_with_another_models_is_refused(classifier, task_files, tmp_path, capsys):
    """A model copied without its class_names.json was scored by comparing the indices "0", "1", ... with the
    file's labels (accuracy 0.267 for a model of 0.733); one with another model's names (2 names, a head of 3
    classes) labelled every row wrongly. Now `evaluate` refuses the first, and every command the second."""
    import shutil

    copy = tmp_path / "copied"
    shutil.copytree(classifier, copy)
    (copy / "class_names.json").unlink()
    data = task_files / "validation.jsonl"
    line = refused(capsys, "evaluate", "--model", copy, "--data", data, *COLUMNS)
    assert line.startswith(
        f"keras-bert3 evaluate: {copy} has no class_names.json: its classes are numbers (0, 1, ...), which cannot"
    ), line
    names = json.loads((classifier / "class_names.json").read_text())["class_names"]
    (copy / "class_names.json").write_text(json.dumps({"class_names": names[:2]}))
    said = f"{copy / 'class_names.json'} names 2 classes but its head gives {len(names)} classes: it belongs to"
    for command in (["evaluate", "--model", copy, "--data", data, *COLUMNS], ["predict", "--model", copy, "Hi."]):
        line = refused(capsys, *command)
        assert line.startswith(f"keras-bert3 {command[0]}: {said}"), line


@pytest.mark.slow
@pytest.mark.one_pass  # The run's folder and its removal: the same on either backend.
def test_lost_work_a_refusal_after_the_run_began_leaves_no_checkpoint_folder(task_files, tmp_path, capsys):
    """A `--sequence-length` longer than the preset's positions is refused as the model is built, after the run
    took its folder: `<output>.checkpoints/` was left behind, holding nothing to resume."""
    output = tmp_path / "m"
    args = ["finetune", "--preset", task_files / "pretrained", "--train", task_files / "train.csv", *COLUMNS]
    line = refused(capsys, *args, "--output", output, "--sequence-length", 100_000)
    assert line.startswith("keras-bert3 finetune: sequence_length=100000 exceeds the backbone's 64 positions."), line
    assert sorted(path.name for path in tmp_path.iterdir()) == []


@pytest.mark.slow
@pytest.mark.one_pass
def test_messy_file_an_empty_context_is_answered_empty_and_the_other_rows_written(task_files, tmp_path, capsys):
    """`predict` with the question answerer on a file with one empty context failed the whole run ("context 2
    is empty", an index in a batch) where its SavedModel answers "" for that row: now every form answers ""."""
    from keras_bert3.models.bert_question_answerer import BertQuestionAnswerer

    model = tmp_path / "answerer"
    answerer = BertQuestionAnswerer.from_preset(
        str(task_files / "pretrained"), sequence_length=32, max_query_length=8, doc_stride=8
    )
    answerer.save_to_preset(str(model))
    rows = tmp_path / "questions.jsonl"
    contexts = ["It returns the path.", "", "It opens the file."]
    rows.write_text("".join(json.dumps({"question": "What?", "context": c}) + "\n" for c in contexts), "utf-8")
    output = tmp_path / "answers.jsonl"
    assert (
        main([str(a) for a in ["predict", "--model", model, "--input", rows, "--output", output, "--verbose", 0]]) == 0
    )
    answers = [json.loads(line) for line in output.read_text("utf-8").splitlines()]
    assert [row["context"] for row in answers] == contexts
    assert answers[1] | {"score": 0.0, "null_score_diff": 0} == {
        "question": "What?",
        "context": "",
        "answer": "",
        "start": 0,
        "end": 0,
        "score": 0.0,
        "null_score_diff": 0,  # (no span: no answer outscores it by far)
    }
    assert answers[1]["null_score_diff"] > 50
    assert answers[1]["score"] == 0 and all(row["answer"] for row in (answers[0], answers[2]))


@pytest.mark.slow
@pytest.mark.one_pass
def test_messy_file_a_row_longer_than_any_model_reads_is_predicted_on_what_it_reads(classifier, task_files, tmp_path):
    """`predict` tokenized a 200 MB row whole (past 9 GB of memory); now the model gets the row's first
    `MAX_TEXT_CHARACTERS` and predicts what it predicts for them, and the output keeps the row whole."""
    from keras_bert3.preprocessing.text_limit import MAX_TEXT_CHARACTERS

    with open(task_files / "train.csv", encoding="utf-8") as f:
        sample = f.read()
    document = (sample * (MAX_TEXT_CHARACTERS // len(sample) + 2))[: MAX_TEXT_CHARACTERS + 50_000]
    for name, text in (("long", document), ("cut", document[:MAX_TEXT_CHARACTERS])):
        (tmp_path / f"{name}.jsonl").write_text(json.dumps({"sentence": text}) + "\n", encoding="utf-8")
        args = ["predict", "--model", classifier, "--input", tmp_path / f"{name}.jsonl", "--text-column", "sentence"]
        assert main([str(a) for a in [*args, "--output", tmp_path / f"{name}.out.jsonl", "--verbose", 0]]) == 0
    long, cut = (json.loads((tmp_path / f"{name}.out.jsonl").read_text("utf-8")) for name in ("long", "cut"))
    assert long["sentence"] == document and (long["label"], long["probability"]) == (cut["label"], cut["probability"])


@pytest.mark.one_pass
def test_messy_file_a_regression_label_that_is_not_a_number_is_named_with_its_line(tmp_path, capsys):
    """`--task regressor` reads numbers: a label that is not one (a word, an empty JSON list, NaN) is refused
    naming its file and line, before any model loads; so is a file whose rows all have one score."""
    cases = {
        "scores.csv": ("sentence,score\nReturn the path.,0.5\nOpen the file.,high\n", 'line 3: the label "high"'),
        "scores.jsonl": (
            '{"sentence": "Open it.", "score": 1}\n{"sentence": "Shut it.", "score": []}\n',
            "line 2: the label []",
        ),
        "nan.csv": ("sentence,score\nReturn the path.,nan\n", 'line 2: the label "nan"'),
        "one_score.csv": (
            "sentence,score\nReturn the path.,0.5\nOpen the file.,0.5\n",
            "every row has the label 0.5, and a regressor",
        ),
    }
    for name, (text, expected) in cases.items():
        (tmp_path / name).write_text(text, "utf-8")
        flags = ["--task", "regressor", "--text-column", "sentence", "--label-column", "score"]
        args = [
            "finetune",
            *flags,
            "--preset",
            tmp_path / "no-preset",
            "--train",
            tmp_path / name,
            "--output",
            tmp_path / "m",
        ]
        line = refused(capsys, *args)
        assert line.startswith(f"keras-bert3 finetune: {tmp_path / name}") and expected in line, line
        assert not (tmp_path / "m").exists() and not (tmp_path / "m.checkpoints").exists()


@pytest.mark.one_pass
def test_messy_file_multi_labels_that_are_no_list_of_names_are_named_with_their_line(tmp_path, capsys):
    """`--task multi-label-classifier` reads a list of labels a row (JSON, or text split by --label-separator; a row
    may have none): a label that is no list of names, labels that differ only by case, and a file without any label
    are refused naming the file (and line), before any model loads."""
    cases = {
        "tags.jsonl": (
            '{"sentence": "Open it.", "tags": ["io"]}\n{"sentence": "Shut it.", "tags": {"io": 1}}\n',
            'line 2: the labels {"io": 1} are not a list of class names',
        ),
        "nested.jsonl": ('{"sentence": "Open it.", "tags": [["io"]]}\n', 'line 1: the labels [["io"]] are not'),
        "case.csv": ("sentence,tags\nOpen it.,IO|files\nShut it.,io\n", "differ only by case or spaces: 'IO', 'io'"),
        "none.csv": ("sentence,tags\nOpen it.,\nShut it.,|\n", "no row has a label, and a multi-label classifier"),
    }
    for name, (text, expected) in cases.items():
        (tmp_path / name).write_text(text, "utf-8")
        flags = ["--task", "multi-label-classifier", "--text-column", "sentence", "--label-column", "tags"]
        args = ["finetune", *flags, "--label-separator", "|", "--preset", tmp_path / "no-preset"]
        line = refused(capsys, *args, "--train", tmp_path / name, "--output", tmp_path / "m")
        assert line.startswith(f"keras-bert3 finetune: {tmp_path / name}") and expected in line, line
        assert not (tmp_path / "m").exists() and not (tmp_path / "m.checkpoints").exists()


@pytest.mark.one_pass
def test_messy_file_a_choice_label_out_of_range_or_a_row_of_other_choices_is_named_with_its_line(tmp_path, capsys):
    """`--task multiple-choice` reads SWAG's CSV or JSON lines: a label that is no choice's index, a row with
    another number of choices than the first, a single choice and a file of neither layout are refused naming the
    file and line, before any model loads."""
    swag = "sent1,sent2,ending0,ending1,ending2,label\n"
    row = lambda *choices, label: json.dumps({"context": "Open it.", "choices": list(choices), "label": label})  # noqa: E731
    cases = {
        "label.csv": (swag + "She opened,the door,and went in,and sang,and flew,3\n", "line 2: the label '3' is no"),
        "negative.jsonl": (row("a", "b", label=-1) + "\n", "line 1: the label -1 is no choice: give the index"),
        "counts.jsonl": (
            row("a", "b", label=0) + "\n" + row("a", "b", "c", label=1) + "\n",
            "line 2: 3 choices, line 1 2",
        ),
        "one.jsonl": (row("a", label=0) + "\n", "line 1: 1 choice; a multiple choice needs at least 2"),
        "layout.csv": ("text,label\nOpen it.,0\n", "line 2: neither JSON lines' context and choices nor SWAG's"),
    }
    for name, (text, expected) in cases.items():
        (tmp_path / name).write_text(text, "utf-8")
        args = ["finetune", "--task", "multiple-choice", "--preset", tmp_path / "no-preset", "--train", tmp_path / name]
        line = refused(capsys, *args, "--output", tmp_path / "m")
        assert line.startswith(f"keras-bert3 finetune: {tmp_path / name}") and expected in line, line
        assert not (tmp_path / "m").exists() and not (tmp_path / "m.checkpoints").exists()


@pytest.mark.slow
@pytest.mark.one_pass
def test_copied_model_an_export_written_before_it_named_its_task_still_serves_with_a_deprecation_warning(
    classifier, tmp_path, capsys
):
    """An export names its task in keras_bert3_task.json. One written before it did (the file removed here) is
    still served for keras_bert3's own tasks, told by its inputs and outputs, with a DeprecationWarning saying to
    export it again; it predicts what the export that names its task predicts."""
    from keras_bert3.jobs.served_model import ServedModel
    from keras_bert3.presets.task_preset import TASK_FILE

    for form, flags in (("saved_model", ["--no-warmup"]), ("onnx", ["--format", "onnx"])):
        export = tmp_path / form
        assert main([str(a) for a in ["export", "--model", classifier, "--output", export, *flags]]) == 0
        assert json.loads((export / TASK_FILE).read_text())["task"] == "classifier"
        expected = ServedModel(str(export))({"text": ["Return the path.", "Open the file."]})
        (export / TASK_FILE).unlink()
        with pytest.warns(DeprecationWarning, match=f"has no {TASK_FILE} .* Export it again"):
            served = ServedModel(str(export))
        assert served.job.name == "classifier"
        assert served({"text": ["Return the path.", "Open the file."]}) == expected
