"""The multiple-choice task's part of the commands: SWAG's CSV (`sent1`, `sent2`, `ending0`.., `label`) or JSON lines
(`context`, `choices`, optional `question`, `label`) in, the chosen index, its text and every choice's probability a
row out, scored by accuracy."""

import dataclasses

import numpy as np

from keras_bert3.jobs.task_job import TaskJob

SWAG_COLUMNS = ("sent1", "sent2", "ending")  # The context, the start every ending continues, the endings' prefix.


@dataclasses.dataclass
class ChoiceExamples:
    contexts: list[str]
    choices: list[list[str]]  # With the question (SWAG's second sentence) before each, as the model reads them.
    labels: list[int] | None  # The right choices' indices; None for files to predict.


class MultipleChoiceJob(TaskJob):
    name = "multiple-choice"
    best_figure = "accuracy"

    def read(self, path: str, columns, *, labelled: bool = True) -> ChoiceExamples:
        from keras_bert3.preprocessing.labelled_files import file_rows

        rows = list(file_rows(path))
        if not rows:
            raise ValueError(f"{path} has no rows.")
        examples = [choice_row(row, path, line, labelled=labelled) for line, row in rows]
        for (line, _), (_, choices, _) in zip(rows, examples):
            if len(choices) != len(examples[0][1]):
                raise ValueError(
                    f"{path}, line {line}: {len(choices)} choices, line {rows[0][0]} {len(examples[0][1])}. Give every "
                    "row the same number of choices."
                )
        contexts, choices, labels = (list(column) for column in zip(*examples))
        return ChoiceExamples(contexts, choices, labels if labelled else None)

    def label_names(self, examples: ChoiceExamples) -> None:
        return None  # Indices of choices, not classes.

    def new_task(self, preset: str, examples: ChoiceExamples, label_names, config, **kwargs):
        return self.task_cls.from_preset(preset, sequence_length=config.sequence_length, **kwargs)

    def fit_data(self, examples: ChoiceExamples, label_names):
        labels = None if examples.labels is None else np.array(examples.labels, "int32")
        return (examples.contexts, examples.choices), labels

    def served_inputs(self, examples: ChoiceExamples) -> dict:
        return {"context": examples.contexts, "choices": examples.choices}

    def input_columns(self, columns) -> dict:
        """The files' fields (JSON lines'; SWAG's CSV is read as `read` reads it)."""
        return {"context": "context", "choices": "choices"}

    def input_batch(self, rows, columns: dict, path: str) -> dict:
        examples = [choice_row(row, path, line, labelled=False) for line, row in rows]
        return {"context": [context for context, _, _ in examples], "choices": [choices for _, choices, _ in examples]}

    def preset_input_names(self, task) -> list[str]:
        return ["context", "choices"]

    def preset_outputs(self, task, inputs: dict) -> dict:
        return {"probabilities": task.predict_proba((inputs["context"], inputs["choices"]), verbose=0)}

    def rows(self, outputs: dict, label_names) -> list[dict]:
        probabilities = np.asarray(outputs["probabilities"])
        return [
            {"choice": int(row.argmax()), "probability": float(row.max()), "probabilities": row.tolist()}
            for row in probabilities
        ]

    def answered(self, rows: list[dict], inputs: dict) -> list[dict]:
        """Each row with its chosen choice's text (`choice_text`)."""
        return [row | {"choice_text": choices[row["choice"]]} for row, choices in zip(rows, inputs["choices"])]

    def report(self, examples: ChoiceExamples, rows: list[dict], label_names) -> dict:
        chosen = np.array([row["choice"] for row in rows])
        return {
            "accuracy": float(np.mean(chosen == np.array(examples.labels))),
            "examples": len(rows),
            "choices": len(examples.choices[0]),
        }

    def report_lines(self, report: dict) -> list[str]:
        chance = 1 / report["choices"]
        return [
            f"accuracy {report['accuracy']:.4f}   ({report['examples']} examples of {report['choices']} choices; "
            f"chance {chance:.4f})"
        ]


def choice_row(row: dict, path: str, line: int, *, labelled: bool) -> tuple[str, list[str], int | None]:
    """`(context, choices, label)` of one row, JSON lines' fields or SWAG's columns; each text cut at
    `text_limit.MAX_TEXT_CHARACTERS`, a question (SWAG's `sent2`) joined before each choice. A missing field, fewer
    than 2 choices and a label that is no choice's index are refused naming the line."""
    from keras_bert3.preprocessing.text_limit import cut_text

    if "choices" in row:
        context, question, choices = row.get("context"), row.get("question"), row["choices"]
        if not isinstance(choices, list) or not all(isinstance(choice, str) for choice in choices):
            raise ValueError(f'{path}, line {line}: "choices" must be a list of strings, got {choices!r:.80}.')
    elif f"{SWAG_COLUMNS[2]}0" in row:
        context, question = row.get(SWAG_COLUMNS[0]), row.get(SWAG_COLUMNS[1])
        choices = [row[f"ending{i}"] for i in range(len(row)) if row.get(f"ending{i}") is not None]
    else:
        raise ValueError(
            f"{path}, line {line}: neither JSON lines' context and choices nor SWAG's sent1, sent2 and ending0.. "
            f"(its fields: {sorted(row)[:10]}). Name the fields so."
        )
    if not isinstance(context, str) or not context.strip():
        raise ValueError(f"{path}, line {line}: the context is missing or empty. Fill it in or remove the row.")
    if len(choices) < 2:
        raise ValueError(f"{path}, line {line}: {len(choices)} choice; a multiple choice needs at least 2.")
    prefix = f"{question} " if isinstance(question, str) and question.strip() else ""
    choices = [cut_text(prefix + choice) for choice in choices]
    if not labelled:
        return cut_text(context), choices, None
    label = row.get("label")
    index = int(label) if isinstance(label, int) or (isinstance(label, str) and label.strip().isdigit()) else None
    if isinstance(label, bool) or index is None or not 0 <= index < len(choices):
        raise ValueError(
            f"{path}, line {line}: the label {label!r} is no choice: give the index of the right one, 0 to "
            f"{len(choices) - 1}."
        )
    return cut_text(context), choices, index
