"""The multi-label classifier's part of the commands: a list of labels a row in, the labels chosen (and each label's
probability) a row out, scikit-learn's multi-label scores, and the threshold chosen on the validation file."""

import numpy as np

from keras_bert3.jobs.text_rows_job import LabelledTexts
from keras_bert3.jobs.text_rows_job import TextRowsJob

THRESHOLDS = np.round(np.arange(0.05, 0.96, 0.05), 2)  # The thresholds `tune` tries on the validation file.


class MultiLabelJob(TextRowsJob):
    name = "multi-label-classifier"
    best_figure = "micro_f1"
    label_kind = "classes"  # A JSON list of labels a row, or text split by --label-separator.
    has_classes = True

    def check_trainable(self, examples: LabelledTexts, path: str) -> None:
        if not any(examples.labels):
            raise ValueError(
                f"{path}: no row has a label, and a multi-label classifier learns which labels a text has. Give rows "
                "their labels (a JSON list, or text split by --label-separator; or check --label-column)."
            )

    def label_names(self, examples: LabelledTexts) -> list[str]:
        return sorted({name for names in examples.labels for name in names})

    def unknown_labels(self, examples: LabelledTexts, label_names: list[str]) -> list[str]:
        return sorted({name for names in examples.labels for name in names} - set(label_names))

    def new_task(self, preset: str, examples: LabelledTexts, label_names, config, **kwargs):
        """The task on `preset`; a new head starts at the training file's label frequencies."""
        task = super().new_task(preset, examples, label_names, config, **kwargs)
        if not task.head_from_preset:
            task.start_at_label_frequencies(multi_hot(examples.labels, label_names))
        return task

    def fit_data(self, examples: LabelledTexts, label_names: list[str]):
        return self.texts(examples), multi_hot(examples.labels, label_names)

    def tune(self, task, validation: LabelledTexts | None, label_names: list[str]) -> dict:
        """Sets the task's threshold to the one of `THRESHOLDS` with the best micro F1 on the validation file (the
        smallest of equals); without one it keeps its own (0.5)."""
        from sklearn import metrics

        if validation is None:
            return {}
        truth = multi_hot(validation.labels, label_names)
        probabilities = task.predict_proba(self.texts(validation), verbose=0)
        scores = [metrics.f1_score(truth, probabilities >= t, average="micro", zero_division=0) for t in THRESHOLDS]
        task.threshold = float(THRESHOLDS[int(np.argmax(scores))])
        return {"threshold": task.threshold, "validation_micro_f1": float(max(scores))}

    def preset_outputs(self, task, inputs: dict) -> dict:
        probabilities = task.predict_proba(self.preset_texts(inputs), verbose=0)
        return {"probabilities": probabilities, "chosen": probabilities >= task.threshold}

    def rows(self, outputs: dict, label_names: list[str] | None) -> list[dict]:
        probabilities, chosen = np.asarray(outputs["probabilities"]), np.asarray(outputs["chosen"])
        names = label_names or [str(i) for i in range(probabilities.shape[-1])]
        return [
            {"labels": [n for n, c in zip(names, row_chosen) if c], "probabilities": dict(zip(names, map(float, row)))}
            for row, row_chosen in zip(probabilities, chosen)
        ]

    def report(self, examples: LabelledTexts, rows: list[dict], label_names: list[str] | None) -> dict:
        from sklearn import metrics

        names = label_names or self.label_names(examples)
        truth = multi_hot(examples.labels, names)
        predicted = multi_hot([row["labels"] for row in rows], names)
        precision, recall, f1, support = metrics.precision_recall_fscore_support(truth, predicted, zero_division=0)
        average = lambda kind: float(metrics.f1_score(truth, predicted, average=kind, zero_division=0))  # noqa: E731
        return {
            "micro_f1": average("micro"),
            "macro_f1": average("macro"),
            "samples_f1": average("samples"),
            "subset_accuracy": float(metrics.accuracy_score(truth, predicted)),  # Every label of a text right.
            "hamming_loss": float(metrics.hamming_loss(truth, predicted)),
            "examples": len(truth),
            "per_label": {
                name: {"precision": float(p), "recall": float(r), "f1": float(f), "support": int(s)}
                for name, p, r, f, s in zip(names, precision, recall, f1, support)
            },
        }

    def report_lines(self, report: dict) -> list[str]:
        lines = [
            f"micro F1 {report['micro_f1']:.4f}   macro F1 {report['macro_f1']:.4f}   subset accuracy "
            f"{report['subset_accuracy']:.4f}   Hamming loss {report['hamming_loss']:.4f}   ({report['examples']} "
            "examples)",
            "",
        ]
        width = max([len(name) for name in report["per_label"]] + [5]) + 2
        lines.append(f"{'label':<{width}}precision  recall      f1  support")
        for name, scores in report["per_label"].items():
            lines.append(
                f"{name:<{width}}{scores['precision']:9.4f} {scores['recall']:7.4f} {scores['f1']:7.4f} "
                f"{scores['support']:8d}"
            )
        return lines


def multi_hot(label_lists: list[list[str]], label_names: list[str]) -> np.ndarray:
    """Rows of 0 and 1, int32 `(n, len(label_names))`: 1 where the row has the label (names not in `label_names`
    left out)."""
    index = {name: i for i, name in enumerate(label_names)}
    rows = np.zeros((len(label_lists), len(label_names)), "int32")
    for row, names in zip(rows, label_lists):
        row[[index[name] for name in names if name in index]] = 1
    return rows
