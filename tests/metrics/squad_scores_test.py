"""squad_scores: SQuAD v1.1's exact match and F1, on answers that differ only
in case, punctuation and articles, that overlap in part, or not at all."""

import pytest

from keras_bert3.metrics.squad_scores import normalize_answer
from keras_bert3.metrics.squad_scores import squad_scores

pytestmark = pytest.mark.backend_free  # Files and Python only: no Keras backend reaches them.


def test_answers_are_compared_as_the_official_script_normalizes_them():
    assert normalize_answer("The  Absolute value, of x!") == "absolute value of x"
    assert squad_scores(["The absolute value"], ["absolute value."]) == {"exact_match": 1.0, "f1": 1.0}


def test_f1_counts_shared_words_and_exact_match_whole_answers():
    scores = squad_scores(["absolute value of x", "a list"], ["the absolute value", "a tuple"])
    # First: 2 shared words, precision 2/4, recall 2/2, F1 2/3; second: nothing shared.
    assert scores["exact_match"] == 0.0
    assert scores["f1"] == pytest.approx((2 / 3 + 0.0) / 2)


def test_no_answers_score_zero_and_unequal_lists_are_refused():
    assert squad_scores([], []) == {"exact_match": 0.0, "f1": 0.0}
    with pytest.raises(ValueError, match="2 predictions for 1 answers"):
        squad_scores(["a", "b"], ["a"])


def test_several_answers_and_questions_without_one_score_as_squad_v2():
    scores = squad_scores(["Denver Broncos", "", "the moon", ""], [["Broncos", "Denver Broncos"], [], [], ["Paris"]])
    assert scores["exact_match"] == pytest.approx(2 / 4)  # The best of the answers; "" for no answer.
    assert scores["has_answer_total"] == 2 and scores["no_answer_total"] == 2
    assert scores["has_answer_exact_match"] == pytest.approx(1 / 2) and scores[
        "no_answer_exact_match"
    ] == pytest.approx(1 / 2)
    assert scores["f1"] == pytest.approx(2 / 4)
