"""Fixtures of the pretraining run's tests."""

import pytest

from keras_bert3_demo.default_corpus import default_corpus_documents


@pytest.fixture(scope="session")
def small_corpus(tmp_path_factory):
    """200 documents of the embedded corpus, in the original format."""
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text("\n\n".join("\n".join(d) for d in default_corpus_documents()[:200]) + "\n", encoding="utf-8")
    return str(path)
