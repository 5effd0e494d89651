"""SQuAD's exact match and F1 (the official SQuAD v1.1 evaluation script:
answers compared after lower-casing and removing punctuation, articles and
extra whitespace; F1 over the bag of words)."""

import collections
import re
import string


def normalize_answer(text: str) -> str:
    """Lower case, no punctuation, no "a"/"an"/"the", single spaces (as SQuAD's script)."""
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def _f1(prediction: str, truth: str) -> float:
    predicted, expected = normalize_answer(prediction).split(), normalize_answer(truth).split()
    common = sum((collections.Counter(predicted) & collections.Counter(expected)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def squad_scores(predictions: list[str], answers: list[str]) -> dict[str, float]:
    """Mean exact match and F1 (fractions in [0, 1]) of predicted against true answer texts.

    Example:
    >>> squad_scores(["The absolute value"], ["absolute value."])
    {'exact_match': 1.0, 'f1': 1.0}
    """
    if len(predictions) != len(answers):
        raise ValueError(f"{len(predictions)} predictions for {len(answers)} answers.")
    if not answers:
        return {"exact_match": 0.0, "f1": 0.0}
    exact = [normalize_answer(p) == normalize_answer(a) for p, a in zip(predictions, answers)]
    f1 = [_f1(p, a) for p, a in zip(predictions, answers)]
    return {"exact_match": sum(exact) / len(exact), "f1": sum(f1) / len(f1)}
