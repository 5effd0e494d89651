"""The question answerer's part of the commands: SQuAD JSON files, a span a row, exact match and F1."""

import logging

import numpy as np

from keras_bert3.jobs.task_job import TaskJob
from keras_bert3.preprocessing.squad_files import SquadQuestions

logger = logging.getLogger("keras_bert3.jobs")


class QuestionAnswererJob(TaskJob):
    name = "question-answerer"

    def read(self, path: str, columns) -> SquadQuestions:
        from keras_bert3.preprocessing.squad_files import read_squad_file

        return read_squad_file(path)

    def check_trainable(self, examples: SquadQuestions, path: str) -> None:
        if not any(examples.answers):
            raise ValueError(
                f"{path} has {len(examples):,} questions and none with an answer: the question answerer learns "
                "from answered questions (the answer's text and answer_start). Add answered ones."
            )

    def label_names(self, examples: SquadQuestions) -> None:
        return None  # Answers are spans of the passage: no labels.

    def new_task(self, preset: str, examples: SquadQuestions, label_names, config, **kwargs):
        # BERT's SQuAD recipe in proportion (384 tokens: questions cut at 64, windows overlapping by 128).
        length = config.sequence_length
        return self.task_cls.from_preset(
            preset, sequence_length=length, max_query_length=length // 6, doc_stride=length // 3, **kwargs
        )

    def fit_data(self, examples: SquadQuestions, label_names):
        """The answered questions (this answerer always gives a span), contexts within
        `text_limit.MAX_TEXT_CHARACTERS` (a question whose answer lies past that is left out)."""
        from keras_bert3.preprocessing.text_limit import MAX_TEXT_CHARACTERS
        from keras_bert3.preprocessing.text_limit import cut_text

        x, left_out = examples.training_examples()
        if left_out:
            logger.warning(
                f"{left_out} questions without an answer (SQuAD v2.0) are left out: this answerer gives a span."
            )
        within = [s + len(t) <= MAX_TEXT_CHARACTERS for s, t in zip(x["answer_start"], x["answer_text"])]
        if not all(within):
            logger.warning(
                f"{within.count(False)} questions whose answer lies past their context's first "
                f"{MAX_TEXT_CHARACTERS:,} characters (more than a model reads) are left out."
            )
        x = {name: [value for value, keep in zip(values, within) if keep] for name, values in x.items()}
        return x | {"context": [cut_text(context) for context in x["context"]]}, None

    def served_inputs(self, examples: SquadQuestions) -> dict:
        return {"question": examples.question, "context": examples.context}

    def input_columns(self, columns) -> dict:
        return {"question": columns.text_column or "question", "context": columns.second_column or "context"}

    def preset_input_names(self, task) -> list[str]:
        return ["question", "context"]

    def preset_outputs(self, task, inputs: dict) -> dict:
        answers = task.predict((inputs["question"], inputs["context"]), verbose=0)
        return {name: np.array([answer[name] for answer in answers]) for name in ("answer", "start", "end", "score")}

    def rows(self, outputs: dict, label_names) -> list[dict]:
        return [
            {
                "answer": answer.decode("utf-8") if isinstance(answer, bytes) else str(answer),
                "start": int(start),
                "end": int(end),
                "score": float(score),
            }
            for answer, start, end, score in zip(*(outputs[k] for k in ("answer", "start", "end", "score")))
        ]

    def report(self, examples: SquadQuestions, rows: list[dict], label_names) -> dict:
        from keras_bert3.metrics.squad_scores import squad_scores

        scores = squad_scores([row["answer"] for row in rows], examples.answers)
        return {**scores, "questions": len(rows)}

    def report_lines(self, report: dict) -> list[str]:
        lines = [f"exact match {report['exact_match']:.4f}   F1 {report['f1']:.4f}   ({report['questions']} questions)"]
        if "no_answer_total" in report:
            for name in ("has_answer", "no_answer"):
                lines.append(
                    f"  {name.replace('_', ' ')}: exact match {report[name + '_exact_match']:.4f}   "
                    f"F1 {report[name + '_f1']:.4f}   ({report[name + '_total']} questions)"
                )
        return lines
