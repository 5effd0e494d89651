"""Entity-level precision, recall and F1 of tagged sentences, as CoNLL's `conlleval` and seqeval's default mode
count them: an entity is a run of tags of one type (`B-PER I-PER`; IOB1, IOB2/BIO and IOBES tags), right only
where its type and both ends are. Written here as seqeval ships only a source archive whose build fails under
pip's build isolation (no dependency of `pip install keras-bert3`); the tests compare with seqeval itself.
"""

import collections


def entities(tags: list[str]) -> set[tuple[str, int, int]]:
    """The entities of one sentence's tags: `(type, first word, last word)`."""
    found, start = set(), 0
    previous_prefix, previous_kind = "O", "_"
    for i, tag in enumerate([*tags, "O"]):
        prefix, kind = (tag[0], tag[1:].split("-", 1)[-1] or "_") if tag else ("O", "_")
        if _ends(previous_prefix, prefix, previous_kind, kind):
            found.add((previous_kind, start, i - 1))
        if _starts(previous_prefix, prefix, previous_kind, kind):
            start = i
        previous_prefix, previous_kind = prefix, kind
    return found


def _ends(previous: str, prefix: str, previous_kind: str, kind: str) -> bool:
    """Whether the entity that the previous tag is in ends before this tag (conlleval's endOfChunk)."""
    if previous in ("E", "S"):
        return True
    if previous in ("B", "I") and prefix in ("B", "S", "O"):
        return True
    return previous not in ("O", ".") and previous_kind != kind


def _starts(previous: str, prefix: str, previous_kind: str, kind: str) -> bool:
    """Whether an entity starts at this tag (conlleval's startOfChunk)."""
    if prefix in ("B", "S"):
        return True
    if prefix in ("E", "I") and previous in ("E", "S", "O"):
        return True
    return prefix not in ("O", ".") and previous_kind != kind


def entity_scores(true_tags: list[list[str]], predicted_tags: list[list[str]]) -> dict:
    """Precision, recall, F1 and support per entity type and overall (micro average, as conlleval's totals)."""
    if len(true_tags) != len(predicted_tags):
        raise ValueError(f"{len(true_tags)} sentences of true tags but {len(predicted_tags)} predicted.")
    counts = collections.defaultdict(lambda: [0, 0, 0])  # type -> [correct, predicted, true]
    for sentence, (truth, predicted) in enumerate(zip(true_tags, predicted_tags)):
        if len(truth) != len(predicted):
            raise ValueError(f"Sentence {sentence}: {len(truth)} true tags but {len(predicted)} predicted.")
        true_entities, predicted_entities = entities(truth), entities(predicted)
        for kind, *_ in true_entities & predicted_entities:
            counts[kind][0] += 1
        for kind, *_ in predicted_entities:
            counts[kind][1] += 1
        for kind, *_ in true_entities:
            counts[kind][2] += 1
    per_type = {kind: _scores(*counts[kind]) for kind in sorted(counts)}
    total = [sum(values[i] for values in counts.values()) for i in range(3)]
    return {"per_type": per_type, "overall": _scores(*total)}


def _scores(correct: int, predicted: int, true: int) -> dict:
    precision = correct / predicted if predicted else 0.0
    recall = correct / true if true else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "support": true}
