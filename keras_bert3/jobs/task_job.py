"""A task as the commands see it: one `TaskJob` subclass per task."""

import importlib

JOBS = {  # --task name -> "module:class" of its job, in keras_bert3.jobs.
    "classifier": "classifier_job:ClassifierJob",
    "token-classifier": "token_classifier_job:TokenClassifierJob",
    "question-answerer": "question_answerer_job:QuestionAnswererJob",
}


class TaskJob:
    """What a task's commands need, as hooks the subclasses define: `read`, `label_names` (None: no labels), `new_task`,
    `fit_data` (`(x, y)`), `served_inputs`, `input_columns`, `preset_input_names`, `preset_outputs` (as a served model
    gives), `rows` (a dict per input), `report` (JSON-able) and `report_lines`."""

    name = ""
    task_class_path = ""  # "module:class" of its task model.
    monitor = "val_loss"  # The validation metric early stopping watches.
    monitor_mode = "min"
    has_classes = False  # Its outputs are classes, named by the model's class_names.json.

    def check_trainable(self, examples, path: str) -> None:
        """Refuses, before any model loads, a training file that has nothing this task learns from."""

    def unknown_labels(self, examples, label_names: list[str]) -> list[str]:
        """The labels of `examples` that are not in `label_names`."""
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
    """The job of a served model (SavedModel, ONNX) by its input and output names."""
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
