"""A task as the commands see it: one `TaskJob` subclass per task, named by the task (`TaskSpec.job`)."""

import warnings


class TaskJob:
    """What a task's commands need, as hooks the subclasses define: `read`, `label_names` (None: no labels), `new_task`,
    `fit_data` (`(x, y)`), `tune`, `served_inputs`, `input_columns`, `preset_input_names`, `preset_outputs` (as a served model
    gives), `rows` (a dict per input), `report` (JSON-able) and `report_lines`."""

    name = ""  # The task's `--task` name (`task_registry.job_of` sets it).
    task_cls = None  # Its task model's class (`task_registry.job_of` sets it; None for a served model's job).
    monitor = "val_loss"  # The validation metric early stopping watches where the task's report gives no figure.
    monitor_mode = "min"
    best_figure = None  # The figure of the task's report that chooses the best weights (`--metric-for-best`'s default).
    has_classes = False  # Its outputs are classes, named by the model's class_names.json.

    def check_trainable(self, examples, path: str) -> None:
        """Refuses, before any model loads, a training file that has nothing this task learns from."""

    def unknown_labels(self, examples, label_names: list[str]) -> list[str]:
        """The labels of `examples` that are not in `label_names`."""
        return []

    def task_class(self):
        """Deprecated: `task_cls`, which the registry sets."""
        warnings.warn(
            "TaskJob.task_class() is deprecated and will be removed in the next release: use its task_cls.",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.task_cls

    def input_batch(self, rows, columns: dict, path: str) -> dict:
        """The served inputs of `(line, row)` pairs of a `predict --input` file: each input's column (`columns`,
        from `input_columns`), as text."""
        return {name: [row_cell(row, column, path, line) for line, row in rows] for name, column in columns.items()}

    def answered(self, rows: list[dict], inputs: dict) -> list[dict]:
        """`rows` (from `rows`) with what they need of the served `inputs` (as they are by default)."""
        return rows

    def tune(self, task, validation, label_names) -> dict:
        """Settings of the fine-tuned `task` chosen on the validation examples (None: no --validation) before its
        preset is written; what was chosen, for the log (nothing by default)."""
        return {}

    def write_figures(self, report: dict, report_path: str) -> list[str]:
        """Pictures of the report written beside `report_path`; their paths (none by default)."""
        return []


def _moved(name: str):
    """The old `task_job.<name>`, moved to `task_registry`: kept for a release, with a DeprecationWarning."""

    def old(*args, **kwargs):
        from keras_bert3.jobs import task_registry
        from keras_bert3.jobs import served_model

        warnings.warn(
            f"keras_bert3.jobs.task_job.{name} is deprecated and will be removed in the next release: use "
            f"keras_bert3.jobs.task_registry.{'job_named' if name == 'job_named' else 'job_of'} (a task's job) "
            "or ServedModel(path).job (a served model's).",
            DeprecationWarning,
            stacklevel=2,
        )
        if name == "job_for_task":
            return task_registry.job_of(type(args[0]))
        if name == "job_for_outputs":
            return served_model.job_by_outputs(*args, **kwargs)
        return task_registry.job_named(*args, **kwargs)

    return old


job_named, job_for_task, job_for_outputs = (_moved(n) for n in ("job_named", "job_for_task", "job_for_outputs"))


def row_cell(row: dict, column: str, path: str, line: int) -> str:
    """A file row's field as text; a missing one is refused naming the line."""
    value = row.get(column)
    if value is None:
        raise ValueError(f"{path}, line {line}: no column {column!r} (its columns: {sorted(row)}).")
    return str(value)


def in_batches(inputs: dict, batch_size: int):
    """Slices of a dict of equal-length lists, `batch_size` rows each."""
    count = len(next(iter(inputs.values())))
    for start in range(0, count, batch_size):
        yield {name: values[start : start + batch_size] for name, values in inputs.items()}
