"""The commands' names this release moved still work, each with a DeprecationWarning naming the new one."""

import pytest

pytestmark = pytest.mark.backend_free  # Names and imports: no Keras backend reaches them.


def test_the_moved_job_finders_still_find_the_jobs():
    from keras_bert3.jobs import task_job
    from keras_bert3.jobs.classifier_job import ClassifierJob
    from keras_bert3.jobs.classifier_job import need_columns  # noqa: F401  (its old place)
    from keras_bert3.models.bert_classifier import BertClassifier
    from keras_bert3.training.finetuning_config import TASKS

    with pytest.warns(DeprecationWarning, match="task_registry.job_named"):
        job = task_job.job_named("classifier")
    assert isinstance(job, ClassifierJob) and job.task_cls is BertClassifier
    with pytest.warns(DeprecationWarning, match="job_for_outputs is deprecated"):
        assert isinstance(task_job.job_for_outputs(["text"], ["logits", "probabilities"]), ClassifierJob)
    with pytest.warns(DeprecationWarning, match="use its task_cls"):
        assert job.task_class() is BertClassifier
    assert {"classifier", "token-classifier", "question-answerer"} <= set(TASKS)


def test_read_labelled_file_still_takes_numeric_labels_with_a_deprecation_warning(tmp_path):
    from keras_bert3.preprocessing.labelled_files import read_labelled_file

    path = tmp_path / "scores.csv"
    path.write_text("text,score\nOpen it.,0.5\nShut it.,1\n", "utf-8")
    with pytest.warns(DeprecationWarning, match='label_kind="number"'):
        old = read_labelled_file(str(path), "text", "score", numeric_labels=True)
    assert (
        old
        == read_labelled_file(str(path), "text", "score", label_kind="number")
        == (["Open it.", "Shut it."], None, [0.5, 1.0])
    )
