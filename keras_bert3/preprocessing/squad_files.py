"""Questions, passages and answers from a SQuAD v1.1 or v2.0 JSON file, each problem named."""

import dataclasses
import json

from keras_bert3.preprocessing.labelled_files import decoded_lines

NO_ANSWER_START = -1  # With an empty text: an answer that says there is none.


@dataclasses.dataclass
class SquadQuestions:
    """One entry per question; `answers` may be several or none (v2.0), `answer_starts` in characters."""

    id: list[str] = dataclasses.field(default_factory=list)
    question: list[str] = dataclasses.field(default_factory=list)
    context: list[str] = dataclasses.field(default_factory=list)
    answers: list[list[str]] = dataclasses.field(default_factory=list)
    answer_starts: list[list[int]] = dataclasses.field(default_factory=list)

    def __len__(self) -> int:
        return len(self.id)

    def training_examples(self) -> tuple[dict, int]:
        """The questions for `BertQuestionAnswerer.fit` (the first answer each; answer_text "" and answer_start -1
        where there is none, SQuAD v2.0's, labelled [CLS]), and how many were left out (none)."""
        examples = {
            "question": list(self.question),
            "context": list(self.context),
            "answer_text": [answers[0] if answers else "" for answers in self.answers],
            "answer_start": [starts[0] if starts else -1 for starts in self.answer_starts],
        }
        return examples, 0

    @property
    def unanswerable(self) -> int:
        """How many questions have no answer (SQuAD v2.0)."""
        return sum(not answers for answers in self.answers)


def read_squad_file(path: str) -> SquadQuestions:
    """The questions of a SQuAD JSON file; `ValueError` names the question's place and id
    for a file that is not SQuAD JSON, an empty question or context, or a misplaced answer."""
    text = "".join(line + "\n" for _, line in decoded_lines(path))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not SQuAD JSON (line {error.lineno}: {error.msg}).") from None
    data = data.get("data") if isinstance(data, dict) else None
    if not isinstance(data, list):
        raise ValueError(f"{path} is not SQuAD JSON (no `data` list).")
    questions = SquadQuestions()
    for a, article in enumerate(data):
        for p, paragraph in enumerate(_field(article, "paragraphs", list, path, f"data[{a}]")):
            where = f"data[{a}].paragraphs[{p}]"
            context = _field(paragraph, "context", str, path, where)
            for q, qa in enumerate(_field(paragraph, "qas", list, path, where)):
                _add_question(questions, qa, context, path, f"{where}.qas[{q}]")
    if not len(questions):
        raise ValueError(f"{path} has no questions.")
    return questions


def _add_question(questions: SquadQuestions, qa, context: str, path: str, where: str) -> None:
    question = _field(qa, "question", str, path, where)
    where = f"{where} (id {qa.get('id')!r})"
    if not question.strip() or not context.strip():
        raise ValueError(f"{path}, {where}: the question or its context is empty. Fill it in or remove it.")
    texts, starts = [], []
    for answer in [] if qa.get("is_impossible") else _field(qa, "answers", list, path, where):
        text, start = (answer.get("text"), answer.get("answer_start")) if isinstance(answer, dict) else (None, None)
        if (text, start) == ("", NO_ANSWER_START):  # How converters write "no answer" in SQuAD v2.0.
            continue
        is_start = isinstance(start, int) and not isinstance(start, bool) and start >= 0
        if not isinstance(text, str) or not text or not is_start or context[start : start + len(text)] != text:
            there = context[start : start + len(str(text))] if is_start else None
            raise ValueError(
                f"{path}, {where}: the answer {text!r} is not at answer_start {start!r} of its context (it has "
                f"{there!r} there; answer_start counts characters from 0; an unanswerable question has no "
                f'answers, or "is_impossible": true, or the answer {{"text": "", "answer_start": -1}}).'
            )
        texts.append(text)
        starts.append(start)
    questions.id.append(str(qa.get("id", where)))
    questions.question.append(question)
    questions.context.append(context)
    questions.answers.append(texts)
    questions.answer_starts.append(starts)


def _field(entry, name: str, kind: type, path: str, where: str):
    value = entry.get(name) if isinstance(entry, dict) else None
    if not isinstance(value, kind):
        raise ValueError(f"{path}, {where}: no {kind.__name__} `{name}` (is it SQuAD JSON?).")
    return value
