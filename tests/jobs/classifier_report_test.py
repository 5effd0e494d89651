"""The classifier's report holds each GLUE task's figure, equal to scikit-learn's on the same labels: Matthews
correlation (CoLA) always, and for two classes the F1 of the positive one (MRPC, QQP), named in the report."""

import pytest
from sklearn.metrics import f1_score
from sklearn.metrics import matthews_corrcoef

from keras_bert3.jobs.classifier_job import ClassifierJob
from keras_bert3.jobs.text_rows_job import LabelledTexts
from keras_bert3_demo.docstring_topics import docstring_topics

pytestmark = pytest.mark.backend_free  # Labels in, numbers out: no Keras backend reaches them.


def two_class_labels():
    """Real labels made binary: does a standard-library sentence come from the first module family? Predictions
    that miss every third sentence's label."""
    data = docstring_topics()
    first = data["class_names"][0]
    truth = ["1" if data["class_names"][label] == first else "0" for label in data["test_labels"]]
    predicted = [("0" if label == "1" else "1") if i % 3 == 0 else label for i, label in enumerate(truth)]
    return data["test_texts"], truth, predicted


def test_two_classes_report_the_positive_class_f1_and_matthews_correlation():
    texts, truth, predicted = two_class_labels()
    job = ClassifierJob()
    report = job.report(LabelledTexts(texts, None, truth), [{"label": label} for label in predicted], ["0", "1"])
    assert report["positive_label"] == "1"
    assert report["f1"] == pytest.approx(f1_score(truth, predicted, pos_label="1"), abs=1e-12)
    assert report["matthews_correlation"] == pytest.approx(matthews_corrcoef(truth, predicted), abs=1e-12)
    assert 0 < report["f1"] < 1 and -1 < report["matthews_correlation"] < 1
    printed = "\n".join(job.report_lines(report))
    assert f"Matthews correlation {report['matthews_correlation']:.4f}   F1 of '1' {report['f1']:.4f}" in printed


def test_a_classifier_that_predicts_one_class_has_no_correlation():
    texts, truth, _ = two_class_labels()
    report = ClassifierJob().report(LabelledTexts(texts, None, truth), [{"label": "0"}] * len(truth), ["0", "1"])
    assert report["matthews_correlation"] == matthews_corrcoef(truth, ["0"] * len(truth)) == 0
    assert report["f1"] == 0
