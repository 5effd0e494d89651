"""The classifier's part of the commands: a label and its probability a row, scikit-learn's scores."""

import numpy as np

from keras_bert3.jobs.confusion_matrix_plot import why_not_drawn
from keras_bert3.jobs.text_rows_job import LabelledTexts
from keras_bert3.jobs.text_rows_job import TextRowsJob
from keras_bert3.jobs.text_rows_job import need_columns  # noqa: F401  (its old place: kept importable)


class ClassifierJob(TextRowsJob):
    name = "classifier"
    best_figure = "accuracy"
    has_classes = True

    def check_trainable(self, examples: LabelledTexts, path: str) -> None:
        classes = sorted(set(examples.labels))
        if len(classes) < 2:
            raise ValueError(
                f"{path}: every row has the label {classes[0]!r}, and a classifier learns to tell at least 2 classes "
                "apart. Add rows of another label (or check --label-column)."
            )

    def label_names(self, examples: LabelledTexts) -> list[str]:
        return sorted(set(examples.labels))

    def unknown_labels(self, examples: LabelledTexts, label_names: list[str]) -> list[str]:
        return sorted(set(examples.labels) - set(label_names))

    def fit_data(self, examples: LabelledTexts, label_names: list[str]):
        index = {name: i for i, name in enumerate(label_names)}
        return self.texts(examples), np.array([index[label] for label in examples.labels], "int32")

    def preset_outputs(self, task, inputs: dict) -> dict:
        return {"probabilities": task.predict_proba(self.preset_texts(inputs), verbose=0)}

    def rows(self, outputs: dict, label_names: list[str] | None) -> list[dict]:
        probabilities = np.asarray(outputs["probabilities"])
        best = probabilities.argmax(-1)
        names = label_names or [str(i) for i in range(probabilities.shape[-1])]
        return [{"label": names[b], "probability": float(p[b])} for b, p in zip(best, probabilities)]

    def report(self, examples: LabelledTexts, rows: list[dict], label_names: list[str] | None) -> dict:
        from sklearn import metrics

        names = label_names or sorted(set(examples.labels))
        truth, predicted = examples.labels, [row["label"] for row in rows]
        precision, recall, f1, support = metrics.precision_recall_fscore_support(
            truth, predicted, labels=names, zero_division=0
        )
        report = {
            "accuracy": metrics.accuracy_score(truth, predicted),
            "macro_f1": metrics.f1_score(truth, predicted, labels=names, average="macro", zero_division=0),
            "weighted_f1": metrics.f1_score(truth, predicted, labels=names, average="weighted", zero_division=0),
            "matthews_correlation": float(metrics.matthews_corrcoef(truth, predicted)),  # GLUE's CoLA figure.
            **positive_class_scores(truth, predicted, names),
            "examples": len(truth),
            "per_class": {
                name: {"precision": p, "recall": r, "f1": f, "support": int(s)}
                for name, p, r, f, s in zip(names, precision, recall, f1, support)
            },
            "confusion_matrix": {
                "labels": names,
                "rows_true_columns_predicted": metrics.confusion_matrix(truth, predicted, labels=names).tolist(),
            },
        }
        left_out = why_not_drawn(report["confusion_matrix"])
        return report if left_out is None else report | {"figure_left_out": left_out}

    def report_lines(self, report: dict) -> list[str]:
        lines = [
            f"accuracy {report['accuracy']:.4f}   macro F1 {report['macro_f1']:.4f}   weighted F1 "
            f"{report['weighted_f1']:.4f}   ({report['examples']} examples)",
            f"Matthews correlation {report['matthews_correlation']:.4f}"
            + (f"   F1 of {report['positive_label']!r} {report['f1']:.4f}" if "f1" in report else ""),
            "",
        ]
        width = max(len(name) for name in report["per_class"]) + 2
        lines.append(f"{'label':<{width}}precision  recall      f1  support")
        for name, scores in report["per_class"].items():
            lines.append(
                f"{name:<{width}}{scores['precision']:9.4f} {scores['recall']:7.4f} {scores['f1']:7.4f} "
                f"{scores['support']:8d}"
            )
        matrix = report["confusion_matrix"]
        if "figure_left_out" in report:  # As large as the figure would be.
            return lines + ["", f"{report['figure_left_out']}."]
        lines += ["", "confusion matrix (rows: true label, columns: predicted, in the order above)"]
        lines += ["  ".join(f"{count:6d}" for count in row) for row in matrix["rows_true_columns_predicted"]]
        return lines

    def write_figures(self, report: dict, report_path: str) -> list[str]:
        """The confusion matrix as a PNG beside the report (`<report>.confusion_matrix.png`), where it is readable
        (`report["figure_left_out"]` says why not)."""
        from keras_bert3.jobs.confusion_matrix_plot import plot_confusion_matrix

        if "figure_left_out" in report:
            return []
        path = f"{report_path.removesuffix('.json')}.confusion_matrix.png"
        plot_confusion_matrix(report["confusion_matrix"], path)
        return [path]


def positive_class_scores(truth: list[str], predicted: list[str], names: list[str]) -> dict:
    """For two classes, the F1 of the positive one (GLUE's MRPC and QQP figure): the second label name in sorted
    order ("1" of 0/1 labels, "yes" of no/yes), named in the report. Nothing for more classes."""
    from sklearn import metrics

    if len(names) != 2:
        return {}
    f1 = metrics.f1_score(truth, predicted, pos_label=names[1], average="binary", zero_division=0)
    return {"positive_label": names[1], "f1": float(f1)}
