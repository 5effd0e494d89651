"""The regressor's part of the commands: numeric labels in, a score a row out, scored by Pearson's and Spearman's
correlations (scipy; GLUE's STS-B figures) and the mean squared error."""

import numpy as np

from keras_bert3.jobs.text_rows_job import LabelledTexts
from keras_bert3.jobs.text_rows_job import TextRowsJob


class RegressorJob(TextRowsJob):
    name = "regressor"
    best_figure = "pearson"
    label_kind = "number"  # --label-column holds numbers: a non-numeric one is refused naming its line.

    def check_trainable(self, examples: LabelledTexts, path: str) -> None:
        if len(set(examples.labels)) < 2:
            raise ValueError(
                f"{path}: every row has the label {examples.labels[0]:g}, and a regressor learns how scores differ. "
                "Add rows of other scores (or check --label-column)."
            )

    def label_names(self, examples: LabelledTexts) -> None:
        return None  # Scores, not classes.

    def fit_data(self, examples: LabelledTexts, label_names: None):
        return self.texts(examples), np.array(examples.labels, "float32")

    def preset_outputs(self, task, inputs: dict) -> dict:
        return {"score": task.predict(self.preset_texts(inputs), verbose=0)}

    def rows(self, outputs: dict, label_names: None) -> list[dict]:
        return [{"score": float(score)} for score in np.asarray(outputs["score"]).reshape(-1)]

    def report(self, examples: LabelledTexts, rows: list[dict], label_names: None) -> dict:
        from scipy import stats

        truth = np.asarray(examples.labels, "float64")
        predicted = np.array([row["score"] for row in rows], "float64")
        constant = len(truth) < 2 or np.ptp(truth) == 0 or np.ptp(predicted) == 0  # No correlation is defined.
        return {
            "pearson": None if constant else float(stats.pearsonr(truth, predicted)[0]),
            "spearman": None if constant else float(stats.spearmanr(truth, predicted)[0]),
            "mean_squared_error": float(np.mean((truth - predicted) ** 2)),
            "mean_absolute_error": float(np.mean(np.abs(truth - predicted))),
            "examples": len(truth),
        }

    def report_lines(self, report: dict) -> list[str]:
        number = lambda value: "undefined (constant scores)" if value is None else f"{value:.4f}"  # noqa: E731
        return [
            f"Pearson {number(report['pearson'])}   Spearman {number(report['spearman'])}   "
            f"mean squared error {report['mean_squared_error']:.4f}   mean absolute error "
            f"{report['mean_absolute_error']:.4f}   ({report['examples']} examples)"
        ]
