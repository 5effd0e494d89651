"""What the commands share for the tasks of one output row per text or text pair (the classifier, the regressor):
a labelled CSV or JSON-lines file in, the texts (and second texts) as the served model's inputs."""

import dataclasses

from keras_bert3.jobs.task_job import TaskJob


@dataclasses.dataclass
class LabelledTexts:
    texts: list[str]
    seconds: list[str] | None  # The second texts of sentence pairs.
    labels: list  # Class names (str); numbers (float) for a regressor; lists of class names for a multi-label one.


class TextRowsJob(TaskJob):
    """A `TaskJob` whose files are `read_labelled_file`'s; a subclass says what its labels are (`label_kind`)."""

    label_kind = "class"  # `labelled_files.LABEL_KINDS`

    def read(self, path: str, columns) -> LabelledTexts:
        from keras_bert3.preprocessing.labelled_files import read_labelled_file

        need_columns(columns, "text_column", "label_column", task=self.name)
        return LabelledTexts(
            *read_labelled_file(
                path,
                columns.text_column,
                columns.label_column,
                columns.second_column,
                label_kind=self.label_kind,
                label_separator=getattr(columns, "label_separator", ";"),
            )
        )

    def new_task(self, preset: str, examples: LabelledTexts, label_names, config, **kwargs):
        size = self.task_cls.spec.head_size_argument
        head = {} if label_names is None or size is None else {size[0]: len(label_names)}
        return self.task_cls.from_preset(
            preset,
            sequence_length=config.sequence_length,
            sentence_pairs=examples.seconds is not None,
            **head,
            **kwargs,
        )

    def texts(self, examples: LabelledTexts):
        """The model's raw inputs: the texts, or the pairs."""
        return examples.texts if examples.seconds is None else (examples.texts, examples.seconds)

    def served_inputs(self, examples: LabelledTexts) -> dict:
        return {"text": examples.texts} | ({} if examples.seconds is None else {"text_pair": examples.seconds})

    def input_columns(self, columns) -> dict:
        """The file's column for each served input (`predict --input`)."""
        need_columns(columns, "text_column", task=self.name)
        pair = {} if columns.second_column is None else {"text_pair": columns.second_column}
        return {"text": columns.text_column} | pair

    def preset_input_names(self, task) -> list[str]:
        return ["text", "text_pair"] if task.sentence_pairs else ["text"]

    def preset_texts(self, inputs: dict):
        """A preset's raw inputs from the served inputs `inputs`."""
        return inputs["text"] if "text_pair" not in inputs else (inputs["text"], inputs["text_pair"])


def need_columns(columns, *names: str, task: str) -> None:
    """Refuses a job without the column flags it needs, naming them."""
    missing = [name for name in names if getattr(columns, name, None) is None]
    if missing:
        flags = " and ".join("--" + name.replace("_", "-") for name in missing)
        raise ValueError(f"--task {task} reads the file's columns: give {flags}.")
