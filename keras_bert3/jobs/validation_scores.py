"""The validation file's report (`evaluate`'s figures) during fine-tuning, added to each epoch's logs as `val_<figure>`,
where early stopping, the kept best weights, the history, TensorBoard and the curves find it."""

import dataclasses
import warnings

import keras

from keras_bert3.jobs.evaluation import scored
from keras_bert3.jobs.served_model import ServedModel

# Figures of a report where lower is better; every other figure is better higher (accuracy, f1, pearson, ...).
LOWER_IS_BETTER = ("loss", "error", "mse", "mae", "rmse")


def higher_is_better(figure: str) -> bool:
    """Whether a larger value of the report's `figure` is a better model."""
    return not any(word in figure for word in LOWER_IS_BETTER)


def report_figures(report: dict) -> dict:
    """A report's top-level figures (floats, NaN for one undefined (None): a correlation of constant scores); counts
    and nested parts are left out."""
    return {
        name: float("nan") if value is None else float(value)
        for name, value in report.items()
        if isinstance(value, float) or value is None
    }


def check_figure(figure: str, job, task, examples, label_names, path: str) -> None:
    """Refuses, before training, a `--metric-for-best` that the task's report (on the first of `examples`) lacks."""
    first = dataclasses.replace(
        examples,
        **{f.name: getattr(examples, f.name)[:8] for f in dataclasses.fields(examples) if getattr(examples, f.name)},
    )
    with (
        warnings.catch_warnings()
    ):  # Figures of a few examples may be undefined (scikit-learn warns): only names count.
        warnings.simplefilter("ignore")
        figures = report_figures(scored(ServedModel(None, model=task, classes=label_names), job, first, label_names))
    if figure not in figures:
        raise ValueError(
            f"--metric-for-best {figure}: the {job.name} report on {path} has no such figure. "
            f"Choose one of: {', '.join(sorted(figures))}."
        )


class ValidationScores(keras.callbacks.Callback):
    """At each epoch's end, scores the model on `examples` (a job's validation file, read) with `evaluate`'s code and
    adds the report's figures to the logs as `val_<figure>`. Place it before the callbacks that read them."""

    def __init__(self, job, examples, label_names):
        super().__init__()
        self.job, self.examples, self.label_names = job, examples, label_names

    def on_epoch_end(self, epoch, logs=None):
        if logs is None:
            return
        report = scored(
            ServedModel(None, model=self.model, classes=self.label_names), self.job, self.examples, self.label_names
        )
        logs.update({f"val_{name}": value for name, value in report_figures(report).items()})
