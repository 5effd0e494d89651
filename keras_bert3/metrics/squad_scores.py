"""SQuAD's exact match and F1 (the official scripts, v1.1 and v2.0): answers compared after lower-casing and
removing punctuation, articles and extra whitespace; F1 over the bag of words; each prediction scored against
its best reference; a v2.0 question without an answer is right only where the prediction is empty."""

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
    if not predicted or not expected:  # v2.0: right only where both are empty.
        return float(predicted == expected)
    common = sum((collections.Counter(predicted) & collections.Counter(expected)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def squad_scores(predictions: list[str], answers: list) -> dict[str, float]:
    """Mean exact match and F1 (fractions in [0, 1]) of predicted answer texts against the references: one
    text per question, or a list of texts (the best counts; an empty list: no answer, v2.0). Where some questions
    have no answer, also the scores over those with one (`has_answer_*`) and without (`no_answer_*`), as v2.0's.

    Example:
    >>> squad_scores(["The absolute value"], ["absolute value."])
    {'exact_match': 1.0, 'f1': 1.0}
    """
    if len(predictions) != len(answers):
        raise ValueError(f"{len(predictions)} predictions for {len(answers)} answers.")
    if not answers:
        return {"exact_match": 0.0, "f1": 0.0}
    references = [[a] if isinstance(a, str) else [t for t in a if normalize_answer(t)] or [""] for a in answers]
    exact = [
        max(float(normalize_answer(p) == normalize_answer(t)) for t in ts) for p, ts in zip(predictions, references)
    ]
    f1 = [max(_f1(p, t) for t in ts) for p, ts in zip(predictions, references)]
    scores = {"exact_match": _mean(exact), "f1": _mean(f1)}
    answered = [ts != [""] for ts in references]
    if not all(answered):
        for name, keep in (("has_answer", True), ("no_answer", False)):
            chosen = [i for i, a in enumerate(answered) if a == keep]
            scores[f"{name}_exact_match"] = _mean([exact[i] for i in chosen])
            scores[f"{name}_f1"] = _mean([f1[i] for i in chosen])
            scores[f"{name}_total"] = len(chosen)
    return scores


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def squad_v2_scores(predictions: list[str], answers: list, null_score_diffs: list[float]) -> dict:
    """SQuAD v2.0's official figures (evaluate-v2.0.py's keys, on its 0-100 scale) of the predicted texts against
    the references (a list of texts a question; empty: no answer), with `null_score_diffs` as its no-answer
    probability file: `exact`, `f1`, `total`, `HasAns_*` and `NoAns_*` of the predictions as given; `best_exact`,
    `best_f1` and their `_thresh`, the scores were every question whose null score diff is over the threshold
    answered "" (the script's `find_best_thresh`: the thresholds tried are the diffs themselves, and 0.0 answers
    every question "")."""
    references = [[t for t in a if normalize_answer(t)] or [""] for a in answers]
    exact = [
        max(float(normalize_answer(p) == normalize_answer(t)) for t in ts) for p, ts in zip(predictions, references)
    ]
    f1 = [max(_f1(p, t) for t in ts) for p, ts in zip(predictions, references)]
    has_answer = [ts != [""] for ts in references]
    scores = {"exact": 100.0 * _mean(exact), "f1": 100.0 * _mean(f1), "total": len(predictions)}
    for name, keep in (("HasAns", True), ("NoAns", False)):
        chosen = [i for i, a in enumerate(has_answer) if a == keep]
        if chosen:
            scores[f"{name}_exact"] = 100.0 * _mean([exact[i] for i in chosen])
            scores[f"{name}_f1"] = 100.0 * _mean([f1[i] for i in chosen])
            scores[f"{name}_total"] = len(chosen)
    for name, raw in (("exact", exact), ("f1", f1)):
        scores[f"best_{name}"], scores[f"best_{name}_thresh"] = _best_threshold(
            predictions, raw, null_score_diffs, has_answer
        )
    return scores


def _best_threshold(predictions, raw, null_score_diffs, has_answer) -> tuple[float, float]:
    """The official script's `find_best_thresh`: from every question answered "", the questions taken in order of
    their null score diff each answered as predicted; the best score (0-100) and the diff where it is reached."""
    score = best = sum(not answered for answered in has_answer)
    threshold = 0.0
    for i in sorted(range(len(raw)), key=lambda i: null_score_diffs[i]):
        score += raw[i] if has_answer[i] else (-1 if predictions[i] else 0)
        if score > best:
            best, threshold = score, float(null_score_diffs[i])
    return 100.0 * best / max(len(raw), 1), threshold
