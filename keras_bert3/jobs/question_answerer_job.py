"""The question answerer's part of the commands: SQuAD JSON files (v1.1, or v2.0 with questions the passage does not
answer), a span (or "") a row, exact match and F1, and v2.0's official figures and null-score threshold."""

import logging

import numpy as np

from keras_bert3.jobs.task_job import TaskJob
from keras_bert3.preprocessing.squad_files import SquadQuestions

logger = logging.getLogger("keras_bert3.jobs")


class QuestionAnswererJob(TaskJob):
    name = "question-answerer"
    best_figure = "f1"

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
        """The windows and answers of `config`'s flags; by default BERT's SQuAD recipe in proportion (384 tokens:
        questions cut at 64, windows overlapping by 128). On a v2.0 file, answering "" where no answer outscores the
        best span (`null_threshold` 0.0 until `tune`)."""
        length = config.sequence_length
        if examples.unanswerable:
            kwargs["null_threshold"] = 0.0
        return self.task_cls.from_preset(
            preset,
            sequence_length=length,
            max_query_length=length // 6 if config.max_query_length is None else config.max_query_length,
            doc_stride=length // 3 if config.doc_stride is None else config.doc_stride,
            max_answer_length=config.max_answer_length,
            n_best=config.n_best,
            **kwargs,
        )

    def fit_data(self, examples: SquadQuestions, label_names):
        """The questions (those without an answer, SQuAD v2.0's, labelled [CLS] as the paper's section 4.3),
        contexts within `text_limit.MAX_TEXT_CHARACTERS` (a question whose answer lies past that is left out)."""
        from keras_bert3.preprocessing.text_limit import MAX_TEXT_CHARACTERS
        from keras_bert3.preprocessing.text_limit import cut_text

        x, _ = examples.training_examples()
        within = [s + len(t) <= MAX_TEXT_CHARACTERS for s, t in zip(x["answer_start"], x["answer_text"])]
        if not all(within):
            logger.warning(
                f"{within.count(False)} questions whose answer lies past their context's first "
                f"{MAX_TEXT_CHARACTERS:,} characters (more than a model reads) are left out."
            )
        x = {name: [value for value, keep in zip(values, within) if keep] for name, values in x.items()}
        return x | {"context": [cut_text(context) for context in x["context"]]}, None

    def tune(self, task, validation: SquadQuestions | None, label_names) -> dict:
        """On a v2.0 validation file, sets the task's `null_threshold` to the one of the best F1 there (the official
        script's `best_f1_thresh`, over the best spans of every question; halfway to the next question's null score
        diff, so that the same F1 holds and no question sits on the threshold); otherwise nothing."""
        from keras_bert3.metrics.squad_scores import squad_v2_scores

        if validation is None or not validation.unanswerable or task.null_threshold is None:
            return {}
        chosen, task.null_threshold = task.null_threshold, None  # Every question's best span, to choose from.
        try:
            spans = task.predict((validation.question, validation.context), verbose=0)
        finally:
            task.null_threshold = chosen
        diffs = [span["null_score_diff"] for span in spans]
        scores = squad_v2_scores([span["answer"] for span in spans], validation.answers, diffs)
        best = scores["best_f1_thresh"]  # A question's own diff: halfway to the next, no question sits on it.
        task.null_threshold = (best + min([d for d in diffs if d > best], default=best + 2.0)) / 2
        return {"null_threshold": task.null_threshold, "validation_best_f1": scores["best_f1"]}

    def served_inputs(self, examples: SquadQuestions) -> dict:
        return {"question": examples.question, "context": examples.context}

    def input_columns(self, columns) -> dict:
        return {"question": columns.text_column or "question", "context": columns.second_column or "context"}

    def preset_input_names(self, task) -> list[str]:
        return ["question", "context"]

    def preset_outputs(self, task, inputs: dict) -> dict:
        answers = task.predict((inputs["question"], inputs["context"]), verbose=0)
        names = ("answer", "start", "end", "score", "null_score_diff")
        return {name: np.array([answer[name] for answer in answers]) for name in names}

    def rows(self, outputs: dict, label_names) -> list[dict]:
        return [
            {
                "answer": answer.decode("utf-8") if isinstance(answer, bytes) else str(answer),
                "start": int(start),
                "end": int(end),
                "score": float(score),
                "null_score_diff": float(diff),
            }
            for answer, start, end, score, diff in zip(
                *(outputs[k] for k in ("answer", "start", "end", "score", "null_score_diff"))
            )
        ]

    def report(self, examples: SquadQuestions, rows: list[dict], label_names) -> dict:
        from keras_bert3.metrics.squad_scores import squad_scores
        from keras_bert3.metrics.squad_scores import squad_v2_scores

        predictions = [row["answer"] for row in rows]
        report = {**squad_scores(predictions, examples.answers), "questions": len(rows)}
        if not examples.unanswerable:
            return report
        diffs = [row["null_score_diff"] for row in rows]
        return report | {"official_v2": squad_v2_scores(predictions, examples.answers, diffs)}

    def report_lines(self, report: dict) -> list[str]:
        lines = [f"exact match {report['exact_match']:.4f}   F1 {report['f1']:.4f}   ({report['questions']} questions)"]
        if "no_answer_total" in report:
            for name in ("has_answer", "no_answer"):
                lines.append(
                    f"  {name.replace('_', ' ')}: exact match {report[name + '_exact_match']:.4f}   "
                    f"F1 {report[name + '_f1']:.4f}   ({report[name + '_total']} questions)"
                )
        if "official_v2" in report:
            v2 = report["official_v2"]
            lines.append(
                f"SQuAD v2.0 script: exact {v2['exact']:.2f}   F1 {v2['f1']:.2f}   best F1 {v2['best_f1']:.2f} at a "
                f'null score diff over {v2["best_f1_thresh"]:.4f} answered ""'
            )
        return lines
