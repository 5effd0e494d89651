"""Real multiple-choice examples, for the multiple-choice task's tests: the questions on standard-library docstrings
(`keras_bert3_demo.docstring_questions`), each with four choices: its answer, the passage's other answer where it
has one, and answers to questions on other passages; the answer's place turns with the example."""

from keras_bert3_demo.docstring_questions import docstring_questions

CHOICES = 4


def choice_questions(split: str, count: int) -> list[dict]:
    """Up to `count` examples of `split` ("train" or "test"): `context` (the passage), `question`, `choices` and
    `label` (the answer's index)."""
    questions = docstring_questions()[split]
    answers, contexts = questions["answer_text"], questions["context"]
    examples = []
    for i in range(min(count, len(answers))):
        same_passage = [a for a, c in zip(answers, contexts) if c == contexts[i] and a != answers[i]][:1]
        elsewhere = (answers[(i + 7 * k) % len(answers)] for k in range(1, len(answers)))
        wrong = same_passage + [a for a in elsewhere if a != answers[i] and a not in same_passage]
        wrong = wrong[: CHOICES - 1]
        label = i % CHOICES
        examples.append(
            {
                "context": contexts[i],
                "question": questions["question"][i],
                "choices": wrong[:label] + [answers[i]] + wrong[label:],
                "label": label,
            }
        )
    return examples
