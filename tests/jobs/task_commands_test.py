"""Each task from the command line, as a user runs it on files: `finetune`,
then `evaluate` and `predict --input` on the fine-tuned preset, its
SavedModel and its ONNX export, which agree; `evaluate`'s figures equal an
independent computation on the same predictions (scikit-learn, seqeval, the
SQuAD script's definitions written out here). The classifier's also predict
texts given on the command line, beside its int8 ONNX and bfloat16 exports.
One pass (`one_pass`): what the file commands read, write and score is the
same code on either backend; the tasks' training and exports on each backend
are tested in tests/models/ and tests/export/."""

import collections
import json
import re
import string

import numpy as np
import pytest

from keras_bert3.cli import main
from keras_bert3.preprocessing.squad_files import read_squad_file
from keras_bert3.preprocessing.tagged_files import read_tagged_file

TASKS = {
    "classifier": dict(
        train="train.csv",
        data="validation.jsonl",
        flags=["--text-column", "sentence", "--label-column", "topic"],
        predict_input="validation.jsonl",
        predict_flags=["--text-column", "sentence"],
    ),
    "regressor": dict(
        train="scores_train.csv",
        data="scores_validation.jsonl",
        flags=["--text-column", "sentence", "--label-column", "code_share"],
        predict_input="scores_validation.jsonl",
        predict_flags=["--text-column", "sentence", "--prediction-prefix", "predicted_"],
    ),
    "multi-label-classifier": dict(
        train="topics_train.csv",
        data="topics_validation.jsonl",
        flags=["--text-column", "sentence", "--label-column", "topics"],
        predict_input="topics_validation.jsonl",
        predict_flags=["--text-column", "sentence"],
    ),
    "multiple-choice": dict(
        train="choices_train.csv",
        data="choices_validation.jsonl",
        flags=[],
        predict_input="choices_validation.jsonl",
        predict_flags=[],
    ),
    "token-classifier": dict(
        train="train.conll", data="validation.conll", flags=[], predict_input="validation.txt", predict_flags=[]
    ),
    "question-answerer": dict(
        train="train.json",
        data="validation.json",
        flags=[],
        predict_input="questions.jsonl",
        predict_flags=[],
    ),
}


def cli(capsys, *args) -> str:
    code = main([str(arg) for arg in args])
    printed, errors = capsys.readouterr()
    assert code == 0, errors[-3000:]
    return printed


def predict_inputs(task_files, task: str) -> None:
    """The validation examples as `predict --input` reads them (the labels left out)."""
    if task == "token-classifier":
        sentences = read_tagged_file(str(task_files / "validation.conll"))
        (task_files / "validation.txt").write_text("".join(" ".join(w) + "\n" for w in sentences.words), "utf-8")
    if task == "question-answerer":
        questions = read_squad_file(str(task_files / "validation.json"))
        with open(task_files / "questions.jsonl", "w", encoding="utf-8") as f:
            for question, context in zip(questions.question, questions.context):
                f.write(json.dumps({"question": question, "context": context}) + "\n")


def read_jsonl(path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.mark.slow
@pytest.mark.one_pass
@pytest.mark.parametrize("task", list(TASKS))
def test_finetune_evaluate_export_and_predict_files_agree_in_every_format(task, task_files, tmp_path, capsys):
    """About a minute for the classifier: one fine-tuning, then four exports and nine predictions and
    evaluations, each a command as a user runs it."""
    files = TASKS[task]
    model = tmp_path / "model"
    cli(
        capsys,
        "finetune",
        "--task",
        task,
        "--preset",
        task_files / "pretrained",
        "--train",
        task_files / files["train"],
        "--validation",
        task_files / files["data"],
        *files["flags"],
        "--output",
        model,
        "--epochs",
        2,
        "--sequence-length",
        64,
        "--batch-size",
        16,
        "--learning-rate",
        1e-3,
        "--patience",
        1,
        "--verbose",
        0,
    )
    assert (model / "task.json").is_file() and not (tmp_path / "model.checkpoints").exists()
    forms = ("model", "saved_model", "onnx")
    cli(capsys, "export", "--model", model, "--output", tmp_path / "saved_model", "--no-warmup")
    cli(capsys, "export", "--model", model, "--output", tmp_path / "onnx", "--format", "onnx")
    predict_inputs(task_files, task)
    reports, predictions = {}, {}
    for form in forms:
        report = tmp_path / f"{form}.json"
        printed = cli(
            capsys,
            "evaluate",
            "--model",
            tmp_path / form,
            "--data",
            task_files / files["data"],
            *files["flags"],
            "--report",
            report,
        )
        assert f"Wrote {report}" in printed
        reports[form] = json.loads(report.read_text("utf-8"))
        output = tmp_path / f"{form}.jsonl"
        cli(
            capsys,
            "predict",
            "--model",
            tmp_path / form,
            "--input",
            task_files / files["predict_input"],
            *files["predict_flags"],
            "--output",
            output,
            "--verbose",
            0,
        )
        predictions[form] = read_jsonl(output)
    check_same_predictions(task, predictions)
    if task == "regressor":  # Scores that agree within 1e-4 give correlations that may differ more: each form's own.
        for form in forms:
            check_report_against_independent_scores(task, task_files, reports[form], predictions[form])
    else:
        check_same_reports(reports)
        check_report_against_independent_scores(task, task_files, reports["model"], predictions["model"])
    if task == "classifier":
        check_texts_on_the_command_line_and_the_other_exports(model, tmp_path, capsys)


TEXTS = ["Open the URL and return the response.", ""]


def check_texts_on_the_command_line_and_the_other_exports(model, tmp_path, capsys) -> None:
    """`predict` on texts given on the command line prints a label and its probability a line, the same from the
    fine-tuned preset, its SavedModel and its ONNX export (the probabilities within the printed rounding); an int8
    ONNX export predicts a known label; a bfloat16 SavedModel holds bfloat16 weights and gives the probabilities
    within 1e-2."""
    import tensorflow as tf

    from keras_bert3_demo.docstring_topics import docstring_topics

    def printed(form) -> list[str]:
        lines = cli(capsys, "predict", "--model", form, *TEXTS).strip().splitlines()
        assert len(lines) == len(TEXTS), lines
        return lines

    def predicted(form) -> list[tuple[str, float]]:
        return [(line.split("\t")[0], float(line.split("\t")[1])) for line in printed(form)]

    lines = predicted(model)
    assert all(label in docstring_topics()["class_names"] for label, _ in lines)
    assert printed(tmp_path / "saved_model") == printed(model)  # Every column, as printed.
    for (label, probability), (onnx_label, onnx_probability) in zip(lines, predicted(tmp_path / "onnx")):
        assert onnx_label == label and abs(onnx_probability - probability) <= 1e-3
    cli(capsys, "export", "--model", model, "--output", tmp_path / "onnx8", "--format", "onnx", "--quantize", "int8")
    assert all(label in docstring_topics()["class_names"] for label, _ in predicted(tmp_path / "onnx8"))
    cli(capsys, "export", "--model", model, "--output", tmp_path / "bf16", "--dtype", "bfloat16", "--no-warmup")
    for (label, probability), (bf16_label, bf16_probability) in zip(lines, predicted(tmp_path / "bf16")):
        assert abs(probability - bf16_probability) <= 1e-2
        assert bf16_label == label or probability < 0.5  # A near tie may change sides.
    weights = tf.train.load_checkpoint(str(tmp_path / "bf16" / "variables" / "variables"))
    assert tf.bfloat16 in set(weights.get_variable_to_dtype_map().values())


def check_same_predictions(task: str, predictions: dict) -> None:
    """Every row of every form the same, scores within 1e-4 (a near tie may go either way)."""
    reference = predictions["model"]
    for form, rows in predictions.items():
        assert len(rows) == len(reference), form
        for ours, theirs in zip(reference, rows):
            for key, value in ours.items():
                if isinstance(value, float):
                    assert abs(theirs[key] - value) <= 1e-4, (form, key)
                elif isinstance(value, list) and value and isinstance(value[0], float):  # Each choice's.
                    assert len(theirs[key]) == len(value), (form, key)
                    assert all(abs(a - b) <= 1e-4 for a, b in zip(theirs[key], value)), (form, key)
                elif isinstance(value, dict):  # A multi-label classifier's probability of each label.
                    assert theirs[key].keys() == value.keys(), (form, key)
                    assert all(abs(theirs[key][name] - p) <= 1e-4 for name, p in value.items()), (form, key)
                else:
                    assert theirs[key] == value, (form, key, ours, theirs)


def check_same_reports(reports: dict) -> None:
    scores = lambda report: {k: v for k, v in report.items() if k not in ("model", "format")}  # noqa: E731
    for form, report in reports.items():
        for key, value in scores(reports["model"]).items():
            assert key in report, (form, key)
            if isinstance(value, float):
                assert abs(report[key] - value) <= 1e-9, (form, key)


def check_report_against_independent_scores(task, task_files, report: dict, rows: list[dict]) -> None:
    if task == "classifier":
        from sklearn.metrics import accuracy_score, confusion_matrix, f1_score, matthews_corrcoef

        truth = [row["topic"] for row in read_jsonl(task_files / "validation.jsonl")]
        predicted = [row["label"] for row in rows]
        labels = report["confusion_matrix"]["labels"]
        assert report["accuracy"] == pytest.approx(accuracy_score(truth, predicted), abs=1e-12)
        assert report["matthews_correlation"] == pytest.approx(matthews_corrcoef(truth, predicted), abs=1e-12)
        assert "f1" not in report and len(labels) > 2  # A positive class's F1 is for two classes.
        assert report["macro_f1"] == pytest.approx(
            f1_score(truth, predicted, labels=labels, average="macro"), abs=1e-12
        )
        assert (
            report["confusion_matrix"]["rows_true_columns_predicted"]
            == confusion_matrix(truth, predicted, labels=labels).tolist()
        )
    elif task == "regressor":
        from scipy.stats import pearsonr, spearmanr

        truth = np.array([row["code_share"] for row in read_jsonl(task_files / "scores_validation.jsonl")])
        predicted = np.array([row["predicted_score"] for row in rows])
        # `predict`'s rows and `evaluate`'s batch the texts apart: the scores agree to float32's rounding.
        assert report["pearson"] == pytest.approx(pearsonr(truth, predicted)[0], abs=1e-6)
        assert report["spearman"] == pytest.approx(spearmanr(truth, predicted)[0], abs=1e-6)
        assert report["mean_squared_error"] == pytest.approx(np.mean((truth - predicted) ** 2), abs=1e-6)
    elif task == "multi-label-classifier":
        from sklearn.metrics import accuracy_score, f1_score, hamming_loss, precision_recall_fscore_support
        from sklearn.preprocessing import MultiLabelBinarizer

        names = sorted(report["per_label"])
        binarizer = MultiLabelBinarizer(classes=names)
        truth = binarizer.fit_transform([row["topics"] for row in read_jsonl(task_files / "topics_validation.jsonl")])
        predicted = binarizer.transform([row["labels"] for row in rows])
        assert all(set(row["probabilities"]) == set(names) for row in rows)
        for average in ("micro", "macro", "samples"):
            expected = f1_score(truth, predicted, average=average, zero_division=0)
            assert report[f"{average}_f1"] == pytest.approx(expected, abs=1e-12)
        assert report["subset_accuracy"] == pytest.approx(accuracy_score(truth, predicted), abs=1e-12)
        assert report["hamming_loss"] == pytest.approx(hamming_loss(truth, predicted), abs=1e-12)
        precision, recall, _, support = precision_recall_fscore_support(truth, predicted, zero_division=0)
        assert [report["per_label"][n]["precision"] for n in names] == pytest.approx(precision, abs=1e-12)
        assert [report["per_label"][n]["recall"] for n in names] == pytest.approx(recall, abs=1e-12)
        assert [report["per_label"][n]["support"] for n in names] == support.tolist()
    elif task == "multiple-choice":
        examples = read_jsonl(task_files / "choices_validation.jsonl")
        chosen = np.array([row["choice"] for row in rows])
        assert report["accuracy"] == pytest.approx(np.mean(chosen == [e["label"] for e in examples]), abs=1e-12)
        for row, example in zip(rows, examples):
            assert row["choice_text"] == f"{example['question']} {example['choices'][row['choice']]}"
            assert row["probability"] == max(row["probabilities"]) and abs(sum(row["probabilities"]) - 1) < 1e-5
    elif task == "token-classifier":
        from seqeval.metrics import f1_score, precision_score, recall_score

        truth = read_tagged_file(str(task_files / "validation.conll")).tags
        predicted = [[tag or "O" for tag in row["tags"]] for row in rows]
        assert report["f1"] == pytest.approx(f1_score(truth, predicted), abs=1e-12)
        assert report["precision"] == pytest.approx(precision_score(truth, predicted), abs=1e-12)
        assert report["recall"] == pytest.approx(recall_score(truth, predicted), abs=1e-12)
        # The long sentence is cut at the sequence length: its last words untagged, counted, scored as O.
        assert rows[-1]["cut"] > 10 and report["sentences_cut"] == sum(row["cut"] > 0 for row in rows)
        assert report["words_cut"] == sum(row["cut"] for row in rows)
    else:
        questions = read_squad_file(str(task_files / "validation.json"))
        predictions = [row["answer"] for row in rows]
        exact, f1 = official_squad_v2(predictions, questions.answers)
        assert report["exact_match"] == pytest.approx(exact, abs=1e-12)
        assert report["f1"] == pytest.approx(f1, abs=1e-12)
        assert report["no_answer_total"] == sum(not answers for answers in questions.answers) > 0
        v2 = report["official_v2"]  # The script's keys, on its 0-100 scale.
        assert (v2["exact"], v2["f1"]) == (pytest.approx(100 * exact), pytest.approx(100 * f1))
        has_answer = [bool(answers) for answers in questions.answers]
        assert v2["NoAns_total"] == has_answer.count(False) and v2["HasAns_total"] == has_answer.count(True)
        no_answer = [not p for p, has in zip(predictions, has_answer) if not has]
        assert v2["NoAns_exact"] == pytest.approx(100 * np.mean(no_answer))
        diffs = [row["null_score_diff"] for row in rows]
        for name in ("exact", "f1"):
            raw = official_squad_v2_raw(predictions, questions.answers)[name]
            best, threshold = official_find_best_thresh(predictions, raw, diffs, has_answer)
            assert v2[f"best_{name}"] == pytest.approx(best) and v2[f"best_{name}_thresh"] == pytest.approx(threshold)


def official_squad_v2_raw(predictions: list[str], answers: list[list[str]]) -> dict:
    """SQuAD v2.0's official evaluate-v2.0.py, its definitions written out: each question's exact
    match and F1 (`get_raw_scores`), the best over the gold answers ("" for none)."""

    def normalize(s):
        s = s.lower()
        s = "".join(ch for ch in s if ch not in set(string.punctuation))
        s = re.compile(r"\b(a|an|the)\b", re.UNICODE).sub(" ", s)
        return " ".join(s.split())

    def compute_f1(gold, pred):
        gold_toks, pred_toks = normalize(gold).split(), normalize(pred).split()
        common = collections.Counter(gold_toks) & collections.Counter(pred_toks)
        num_same = sum(common.values())
        if len(gold_toks) == 0 or len(pred_toks) == 0:
            return int(gold_toks == pred_toks)
        if num_same == 0:
            return 0
        precision, recall = num_same / len(pred_toks), num_same / len(gold_toks)
        return (2 * precision * recall) / (precision + recall)

    exact, f1 = [], []
    for prediction, golds in zip(predictions, answers):
        golds = [a for a in golds if normalize(a)] or [""]
        exact.append(max(int(normalize(a) == normalize(prediction)) for a in golds))
        f1.append(max(compute_f1(a, prediction) for a in golds))
    return {"exact": exact, "f1": f1}


def official_squad_v2(predictions: list[str], answers: list[list[str]]) -> tuple[float, float]:
    """Mean exact match and F1 over the questions."""
    raw = official_squad_v2_raw(predictions, answers)
    return float(np.mean(raw["exact"])), float(np.mean(raw["f1"]))


def official_find_best_thresh(preds, scores, na_probs, has_answer) -> tuple[float, float]:
    """evaluate-v2.0.py's `find_best_thresh`, written out (questions by index instead of id)."""
    num_no_ans = sum(1 for has in has_answer if not has)
    cur_score = num_no_ans
    best_score = cur_score
    best_thresh = 0.0
    qid_list = sorted(range(len(na_probs)), key=lambda k: na_probs[k])
    for qid in qid_list:
        if has_answer[qid]:
            diff = scores[qid]
        else:
            if preds[qid]:
                diff = -1
            else:
                diff = 0
        cur_score += diff
        if cur_score > best_score:
            best_score = cur_score
            best_thresh = na_probs[qid]
    return 100.0 * best_score / len(scores), best_thresh
