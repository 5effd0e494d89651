"""A task as the commands see it: one `TaskJob` subclass per task, named by the task (`TaskSpec.job`)."""


class TaskJob:
    """What a task's commands need, as hooks the subclasses define: `read`, `label_names` (None: no labels), `new_task`,
    `fit_data` (`(x, y)`), `served_inputs`, `input_columns`, `preset_input_names`, `preset_outputs` (as a served model
    gives), `rows` (a dict per input), `report` (JSON-able) and `report_lines`."""

    name = ""  # The task's `--task` name (`task_registry.job_of` sets it).
    task_cls = None  # Its task model's class (`task_registry.job_of` sets it; None for a served model's job).
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


def in_batches(inputs: dict, batch_size: int):
    """Slices of a dict of equal-length lists, `batch_size` rows each."""
    count = len(next(iter(inputs.values())))
    for start in range(0, count, batch_size):
        yield {name: values[start : start + batch_size] for name, values in inputs.items()}
