"""`ResumableBackup` with a task's `fit` on raw texts: a fit stopped after a
checkpoint and resumed by a new model (as a rerun builds) ends with the weights of an
uninterrupted fit (on the backends other than TensorFlow, where the fine-tuning
command's kill and stop do: tests/jobs/finetune_resume_test.py); half-written
checkpoints are ignored, and unreadable or earlier-layout ones refused. (Kills at
every moment of a real run, through the command line: tests/training/pretraining_run_test.py.)"""

import os

import keras
import numpy as np
import pytest

from keras_bert3.training.resumable_backup import ResumableBackup
from keras_bert3.training.resumable_backup import latest_checkpoint
from keras_bert3.training.resumable_backup import restore_checkpoint
from tests.models.bert_classifier_test import tiny_classifier

EPOCHS = 4


class StopAfter(keras.callbacks.Callback):
    """Ends `fit` after `epochs` epochs, as a kill right after that epoch's checkpoint would."""

    def __init__(self, epochs):
        super().__init__()
        self.epochs = epochs

    def on_epoch_end(self, epoch, logs=None):
        if epoch + 1 == self.epochs:
            self.model.stop_training = True


def fitted(tokenizer, texts, labels, callbacks):
    keras.utils.set_random_seed(0)  # The same initial weights for every model here, as a rerun builds.
    classifier = tiny_classifier(tokenizer, num_classes=6, sequence_length=16)
    classifier.compile(learning_rate=1e-2, warmup_ratio=0.25)
    history = classifier.fit(texts, labels, batch_size=16, epochs=EPOCHS, shuffle=False, callbacks=callbacks, verbose=0)
    return classifier, history.history


@pytest.mark.slow
@pytest.mark.skipif(
    keras.backend.backend() == "tensorflow",
    reason="tests/jobs/finetune_resume_test.py, a one-pass test of the TensorFlow pass, kills and stops a "
    "classifier's fine-tuning mid-epoch and resumes it to the uninterrupted history and weights",
)
def test_a_stopped_classifier_fit_resumes_to_the_uninterrupted_weights(tmp_path, tokenizer, topics):
    """On the backends other than TensorFlow's (whose fine-tuning command
    covers it, killed and stopped mid-epoch: tests/jobs/finetune_resume_test.py)."""
    texts, labels = topics["train_texts"][:48], np.array(topics["train_labels"][:48])
    uninterrupted, full = fitted(tokenizer, texts, labels, [])
    backup = str(tmp_path / "backup")
    _, first = fitted(tokenizer, texts, labels, [ResumableBackup(backup), StopAfter(2)])
    assert len(first["loss"]) == 2 and latest_checkpoint(backup).endswith("checkpoint-2")

    resumed, second = fitted(tokenizer, texts, labels, [ResumableBackup(backup)])  # A new model, as a rerun builds.
    assert len(second["loss"]) == EPOCHS - 2  # Epochs 3 and 4 only ...
    assert int(resumed.optimizer.iterations) == EPOCHS * 3  # ... from the saved step (3 batches an epoch) ...
    np.testing.assert_allclose(first["loss"] + second["loss"], full["loss"], rtol=1e-6)
    for mine, reference in zip(resumed.weights, uninterrupted.weights):  # ... to the uninterrupted weights.
        np.testing.assert_allclose(
            keras.ops.convert_to_numpy(mine),
            keras.ops.convert_to_numpy(reference),
            rtol=1e-6,
            atol=1e-7,
            err_msg=mine.path,
        )
    assert sorted(os.listdir(backup)) == [f"checkpoint-{EPOCHS}"]  # Older checkpoints removed.


@pytest.mark.slow
def test_half_written_checkpoints_are_ignored_and_bad_ones_refused(tmp_path, tokenizer, topics):
    texts, labels = topics["train_texts"][:16], np.array(topics["train_labels"][:16])
    backup = tmp_path / "backup"
    classifier, _ = fitted(tokenizer, texts, labels, [ResumableBackup(str(backup)), StopAfter(1)])
    # A killed run's temporary folder, complete or not, is not a checkpoint: removed on resume.
    (backup / ".checkpoint-2.12345.partial").mkdir()
    (backup / ".checkpoint-2.12345.partial" / "model.weights.h5").write_bytes(b"\x89HDF")
    assert restore_checkpoint(classifier, str(backup))[0] == (1, 0)  # One epoch done, no batch of the next.
    assert sorted(os.listdir(backup)) == ["checkpoint-1"]

    weights = backup / "checkpoint-1" / "model.weights.h5"
    weights.write_bytes(weights.read_bytes()[:2000])  # Damaged after it was written (a disk error, a hand).
    with pytest.raises(ValueError, match=r"Cannot resume from the checkpoint .*checkpoint-1: .*delete .*backup"):
        restore_checkpoint(classifier, str(backup))

    earlier = tmp_path / "earlier"
    earlier.mkdir()
    (earlier / "latest.weights.h5").write_bytes(b"")
    with pytest.raises(ValueError, match=r"layout of an earlier keras_bert3 \(latest.weights.h5\).*delete"):
        restore_checkpoint(classifier, str(earlier))


@pytest.mark.slow
def test_a_checkpoint_of_non_finite_weights_is_never_written(tmp_path, tokenizer, topics):
    """One weight made NaN after a good checkpoint: the next write raises,
    naming the good one, and leaves the folder as it was."""
    from keras_bert3.training.divergence import TrainingDiverged
    from keras_bert3.training.resumable_backup import write_checkpoint

    texts, labels = topics["train_texts"][:16], np.array(topics["train_labels"][:16])
    backup = tmp_path / "backup"
    classifier, _ = fitted(tokenizer, texts, labels, [ResumableBackup(str(backup)), StopAfter(1)])
    bias = next(v for v in classifier.weights if len(v.shape) == 1)
    bias.assign(keras.ops.where(keras.ops.arange(bias.shape[0]) == 3, np.nan, bias.value))
    with pytest.raises(
        TrainingDiverged,
        match=rf"NaN or infinite values in 1 of \d+ .*\({bias.path}\)\. The last checkpoint, {backup}/checkpoint-1 \(step 1\)",
    ):
        write_checkpoint(classifier, str(backup), 2)
    assert sorted(os.listdir(backup)) == ["checkpoint-1"]
