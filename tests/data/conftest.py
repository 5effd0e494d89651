"""Fixtures for the pretraining data tests: the real MiniLM uncased vocabulary and
the embedded default corpus (real English prose)."""

import pytest

from keras_bert3_demo import default_corpus_path


@pytest.fixture(scope="session")
def corpus_path():
    return default_corpus_path()


def write_corpus_parts(directory, parts: int) -> str:
    """Writes the embedded corpus into `parts` files of the original format
    (documents dealt round-robin), `part0.txt`, ...; returns their glob."""
    from keras_bert3_demo import default_corpus_documents

    documents = default_corpus_documents()
    for k in range(parts):
        text = "\n\n".join("\n".join(document) for document in documents[k::parts]) + "\n"
        (directory / f"part{k}.txt").write_text(text, encoding="utf-8")
    return str(directory / "*.txt")


def collect(dataset, passes: int = 1) -> dict:
    """Iterates `dataset` `passes` times; returns its fields as concatenated numpy arrays."""
    import numpy as np

    rows = []
    for _ in range(passes):
        for x, y, sample_weight in dataset.as_numpy_iterator():
            rows.append({**x, **{f"y_{k}": v for k, v in y.items()}, "mask_weights": sample_weight["mlm"]})
    return {key: np.concatenate([row[key] for row in rows]) for key in rows[0]}
