"""Entity-level scores against seqeval itself (the definitions they follow):
every entity of 20,000 random tag sequences in IOB1, IOB2 and IOBES, and the
overall and per-type scores of a random tagging."""

import random

import pytest

from keras_bert3.metrics.entity_scores import entities
from keras_bert3.metrics.entity_scores import entity_scores

pytestmark = pytest.mark.backend_free  # Plain Python.

TAGS = ["O", "B-PER", "I-PER", "E-PER", "S-PER", "B-LOC", "I-LOC", "I-MISC", "B", "I"]


def test_entities_are_seqevals_on_random_sequences():
    from seqeval.metrics.sequence_labeling import get_entities

    rng = random.Random(0)
    for _ in range(20_000):
        tags = [rng.choice(TAGS) for _ in range(rng.randint(0, 9))]
        assert entities(tags) == set(get_entities(tags)), tags


def test_scores_are_seqevals_overall_and_per_type():
    from seqeval.metrics import classification_report
    from seqeval.metrics import f1_score
    from seqeval.metrics import precision_score
    from seqeval.metrics import recall_score

    rng = random.Random(1)
    truth = [[rng.choice(TAGS[:7]) for _ in range(8)] for _ in range(400)]
    predicted = [[tag if rng.random() < 0.7 else rng.choice(TAGS[:7]) for tag in sentence] for sentence in truth]
    scores = entity_scores(truth, predicted)
    assert scores["overall"]["f1"] == pytest.approx(f1_score(truth, predicted), abs=1e-12)
    assert scores["overall"]["precision"] == pytest.approx(precision_score(truth, predicted), abs=1e-12)
    assert scores["overall"]["recall"] == pytest.approx(recall_score(truth, predicted), abs=1e-12)
    report = classification_report(truth, predicted, output_dict=True)
    for kind, values in scores["per_type"].items():
        assert values["f1"] == pytest.approx(report[kind]["f1-score"], abs=1e-12)
        assert values["support"] == report[kind]["support"]
    assert 0.2 < scores["overall"]["f1"] < 0.9  # Neither all right nor all wrong: the counts are exercised.


def test_sentences_of_different_lengths_are_refused():
    with pytest.raises(ValueError, match="Sentence 0: 2 true tags but 1 predicted"):
        entity_scores([["O", "O"]], [["O"]])
