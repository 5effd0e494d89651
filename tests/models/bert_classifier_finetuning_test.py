"""Fine-tuning the real all-MiniLM-L6-v2 on real labelled text (standard-library
docstring sentences by module family) with BertClassifier and with Hugging
Face under the same budget: both learn, to about the same accuracy. A short
version; bench/bench_finetuning.py runs the full comparison."""

import keras
import numpy as np
import pytest

from keras_bert3.models.bert_classifier import BertClassifier
from keras_bert3_demo.docstring_topics import docstring_topics
from tests.hf_finetuning import finetune_hf_once

BUDGET = dict(epochs=2, batch_size=32, learning_rate=2e-4, sequence_length=64)
TRAIN, TEST = 512, 400  # 512: both pass the bars below with room (0.52 ours, 0.57 HF; majority 0.31).


@pytest.mark.slow
def test_finetuning_minilm_learns_like_hugging_face(minilm_dir):
    """Over a minute on a CPU core: two epochs of MiniLM (22 million weights) on
    512 texts, the least data on which both runs clear the majority class with
    room. The Hugging Face run is made once for both passes (`finetune_hf_once`)."""
    data = docstring_topics()
    train_texts, train_labels = data["train_texts"][:TRAIN], data["train_labels"][:TRAIN]
    test_texts, test_labels = data["test_texts"][:TEST], np.array(data["test_labels"][:TEST])
    majority = np.bincount(test_labels).max() / len(test_labels)

    keras.utils.set_random_seed(0)
    classifier = BertClassifier.from_preset(
        minilm_dir, num_classes=len(data["class_names"]), sequence_length=BUDGET["sequence_length"]
    )
    classifier.compile(learning_rate=BUDGET["learning_rate"], warmup_ratio=0.1)
    classifier.fit(
        train_texts, np.array(train_labels), batch_size=BUDGET["batch_size"], epochs=BUDGET["epochs"], verbose=0
    )
    ours = float(np.mean(classifier.predict(test_texts, verbose=0).argmax(-1) == test_labels))

    reference = finetune_hf_once(
        minilm_dir,
        train_texts,
        train_labels,
        test_texts,
        test_labels,
        num_classes=len(data["class_names"]),
        warmup_ratio=0.1,
        **BUDGET,
    )
    # Both clearly learn (six classes; the majority class is about a quarter)...
    assert ours > majority + 0.15, (ours, majority)
    assert reference["accuracy"] > majority + 0.15, (reference["accuracy"], majority)
    # ... to about the same accuracy: within three standard errors of the
    # difference of two accuracies on these test sentences. Seeds and dropout
    # masks differ, and move both: over seeds 0-2 Hugging Face gave 0.5675,
    # 0.5075, 0.49; ours on TensorFlow 0.5325, 0.4625, 0.5125; on JAX 0.48-0.52.
    spread = np.sqrt(sum(a * (1 - a) for a in (ours, reference["accuracy"])) / len(test_labels))
    assert abs(ours - reference["accuracy"]) < 3 * spread, (ours, reference["accuracy"], 3 * spread)
