"""`keras-bert3 evaluate`: a fine-tuned model's scores on a labelled file."""

from keras_bert3.jobs.served_model import LABEL_NAMES_FILE, ServedModel
from keras_bert3.jobs.task_job import in_batches

BATCH_SIZE = 64  # Inputs a call of the served model.


def evaluate(model_path: str, data: str, columns, *, report_path: str | None = None) -> dict:
    """The model's report (`TaskJob.report`) on the labelled file `data`, also written to `report_path`."""
    return evaluated(model_path, data, columns, report_path=report_path)[0]


def evaluated(model_path: str, data: str, columns, *, report_path: str | None = None) -> tuple[dict, object]:
    """`evaluate`'s report and the task's job (whose `report_lines` print it)."""
    model = ServedModel(model_path)
    if model.label_names is None and model.job.has_classes:
        raise ValueError(
            f"{model_path} has no {LABEL_NAMES_FILE}: its classes are numbers (0, 1, ...), which cannot be matched "
            f"with the labels of {data}. Copy the {LABEL_NAMES_FILE} of the fine-tuned preset beside it (finetune "
            "writes it; export copies it)."
        )
    examples = model.job.read(data, columns)
    if model.label_names:
        unknown = model.job.unknown_labels(examples, model.label_names)
        if unknown:
            raise ValueError(
                f"{data} has labels the model at {model_path} does not know: {', '.join(map(repr, unknown[:5]))} "
                f"(it knows {', '.join(model.label_names[:10])}{', ...' if len(model.label_names) > 10 else ''})."
            )
    report = {"task": model.job.name, "model": model_path, "format": model.format, "data": data}
    report |= scored(model, model.job, examples, model.label_names)
    if report_path:
        from keras_bert3.presets.preset_format import write_json

        write_json(report_path, report)
        report["figures"] = model.job.write_figures(report, report_path)
    return report, model.job


def scored(rows_of, job, examples, label_names) -> dict:
    """`job`'s report on `examples` (read by `job.read`), whose served inputs `rows_of` (a `ServedModel`, or any function
    of a dict of input lists giving a row each) answers, `BATCH_SIZE` at a time."""
    rows = []
    for batch in in_batches(job.served_inputs(examples), BATCH_SIZE):
        rows += rows_of(batch)
    return job.report(examples, rows, label_names)
