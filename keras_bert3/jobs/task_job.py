"""A task as the commands see it: how its files are read, its model built,
its served outputs turned into rows, and its predictions scored. One
`TaskJob` subclass per task (`classifier_job`, `token_classifier_job`,
`question_answerer_job`), found by name (`--task`) or by what a served model
takes and gives (`job_for_outputs`)."""

import importlib

# --task name -> "module:class" of its job, in keras_bert3.jobs.
JOBS = {
    "classifier": "classifier_job:ClassifierJob",
    "token-classifier": "token_classifier_job:TokenClassifierJob",
    "question-answerer": "question_answerer_job:QuestionAnswererJob",
}


class TaskJob:
    """What a task's commands need, as hooks; see the subclasses.

    - `read(path, config)`: the labelled examples of a file (`config` gives the columns);
    - `label_names(examples)`: the labels a new head is built for (None: none);
    - `new_task(preset, label_names, config)`: the task on a pretrained preset;
    - `fit_data(examples, label_names)`: `(x, y)` for the task's `fit`;
    - `served_inputs(examples)`: a dict of string lists, the served model's inputs;
    - `preset_outputs(task, inputs)`: what a served model gives, from a preset;
    - `rows(outputs, label_names)`: one dict of predicted fields per input;
    - `report(examples, rows, label_names)`: the scores of `rows` (all the examples'), a JSON-able dict.
    """

    name = ""
    task_class_path = ""  # "module:class" of its task model.
    monitor = "val_loss"  # The validation metric early stopping watches.
    monitor_mode = "min"

    def unknown_labels(self, examples, label_names: list[str]) -> list[str]:
        """The labels of `examples` that are not in `label_names` (none, for a task without labels)."""
        return []

    def write_figures(self, report: dict, report_path: str) -> list[str]:
        """Pictures of the report written beside `report_path`; their paths (none by default)."""
        return []

    def task_class(self):
        module, name = self.task_class_path.split(":")
        return getattr(importlib.import_module(module), name)


def job_named(name: str) -> TaskJob:
    """The job of `--task name`."""
    module, cls = JOBS[name].split(":")
    return getattr(importlib.import_module(f"keras_bert3.jobs.{module}"), cls)()


def job_for_task(task) -> TaskJob:
    """The job of a task model (a fine-tuned preset's)."""
    for name in JOBS:
        job = job_named(name)
        if isinstance(task, job.task_class()):
            return job
    raise ValueError(f"The commands run {', '.join(JOBS)}; this preset holds a {type(task).__name__}.")


def job_for_outputs(input_names, output_names) -> TaskJob:
    """The job of a served model (SavedModel, ONNX) by the strings it takes
    and what it gives: `question` and `context` in, an answerer; per-word
    `word_labels` out, a token classifier; `probabilities` out, a classifier."""
    if set(input_names) == {"question", "context"}:
        return job_named("question-answerer")
    if "word_labels" in output_names:
        return job_named("token-classifier")
    if "probabilities" in output_names:
        return job_named("classifier")
    raise ValueError(f"A served model with inputs {sorted(input_names)} and outputs {sorted(output_names)} is no task.")


def in_batches(inputs: dict, batch_size: int):
    """Slices of a dict of equal-length lists, `batch_size` rows each."""
    count = len(next(iter(inputs.values())))
    for start in range(0, count, batch_size):
        yield {name: values[start : start + batch_size] for name, values in inputs.items()}
