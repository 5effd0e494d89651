"""Fine-tuning the real all-MiniLM-L6-v2 on real labelled text (standard-library
docstring sentences by module family) with BertClassifier and with Hugging
Face under the same budget: both learn, to about the same accuracy. A short
version; bench/bench_finetuning.py runs the full comparison."""

import keras
import numpy as np
import pytest

from keras_bert3.models.bert_classifier import BertClassifier
from tests.minilm_finetuning_reference import BUDGET
from tests.minilm_finetuning_reference import WARMUP_RATIO
from tests.minilm_finetuning_reference import reference_accuracy
from tests.minilm_finetuning_reference import split


@pytest.mark.slow
@pytest.mark.one_pass
def test_finetuning_minilm_learns_like_hugging_face(minilm_dir):
    """Over a minute on a CPU core: two epochs of MiniLM (22 million weights) on
    512 texts, the least data on which both runs clear the majority class with
    room. The Hugging Face run is made once per machine
    (tests/minilm_finetuning_reference.py; tests/conftest.py starts it as the session begins)."""
    data = split()
    test_labels = np.array(data["test_labels"])
    majority = np.bincount(test_labels).max() / len(test_labels)

    keras.utils.set_random_seed(0)
    classifier = BertClassifier.from_preset(
        minilm_dir, num_classes=data["num_classes"], sequence_length=BUDGET["sequence_length"]
    )
    classifier.compile(learning_rate=BUDGET["learning_rate"], warmup_ratio=WARMUP_RATIO)
    classifier.fit(
        data["train_texts"],
        np.array(data["train_labels"]),
        batch_size=BUDGET["batch_size"],
        epochs=BUDGET["epochs"],
        verbose=0,
    )
    ours = float(np.mean(classifier.predict(data["test_texts"], verbose=0).argmax(-1) == test_labels))

    reference = reference_accuracy()
    # Both clearly learn (six classes; the majority class is about a quarter)...
    assert ours > majority + 0.15, (ours, majority)
    assert reference > majority + 0.15, (reference, majority)
    # ... to about the same accuracy: within three standard errors of the
    # difference of two accuracies on these test sentences. Seeds and dropout
    # masks differ, and move both: over seeds 0-2 Hugging Face gave 0.5675,
    # 0.5075, 0.49; ours on TensorFlow 0.5325, 0.4625, 0.5125; on JAX 0.48-0.52.
    spread = np.sqrt(sum(a * (1 - a) for a in (ours, reference)) / len(test_labels))
    assert abs(ours - reference) < 3 * spread, (ours, reference, 3 * spread)
