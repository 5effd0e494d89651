"""Fixtures for the pretraining data tests: the real MiniLM uncased vocabulary and
the embedded default corpus (real English prose)."""

import pytest

from keras_bert3.data import default_corpus_path
from keras_bert3.tokenizers import BertTokenizer


@pytest.fixture(scope="session")
def tokenizer(minilm_dir):
    return BertTokenizer.from_preset(minilm_dir)


@pytest.fixture(scope="session")
def corpus_path():
    return default_corpus_path()


def collect(dataset, passes: int = 1) -> dict:
    """Iterates `dataset` `passes` times; returns its fields as concatenated numpy arrays."""
    import numpy as np

    rows = []
    for _ in range(passes):
        for x, y, sample_weight in dataset.as_numpy_iterator():
            rows.append({**x, **{f"y_{k}": v for k, v in y.items()}, "mask_weights": sample_weight["mlm"]})
    return {key: np.concatenate([row[key] for row in rows]) for key in rows[0]}
