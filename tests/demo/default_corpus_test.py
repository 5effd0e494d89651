"""The embedded corpus: real prose, >= 1 MB, documents of sentences, deterministic."""

import numpy as np
import tensorflow as tf
import pytest

from keras_bert3.data import document_dataset
from keras_bert3.data import split_sentences
from keras_bert3_demo import default_corpus_documents
from keras_bert3_demo import default_corpus_path
from keras_bert3_demo import python_docs_documents

pytestmark = pytest.mark.backend_free  # Files and Python only: no Keras backend reaches them.


@pytest.mark.slow
def test_default_corpus(tmp_path):
    documents = default_corpus_documents()
    assert sum(len(s.encode()) for d in documents for s in d) > 1_000_000
    assert len(documents) > 300 and all(d and all(s.strip() == s and s for s in d) for d in documents)
    assert documents[: len(python_docs_documents())] == python_docs_documents()
    # Derived afresh (not from the cache), the same documents.
    assert default_corpus_documents(cache_dir=str(tmp_path)) == documents


def test_readers_agree_on_formats(tmp_path):
    documents = default_corpus_documents()[:12]
    sentences = tmp_path / "sentences.txt"
    sentences.write_text("\n\n".join("\n".join(d) for d in documents) + "\n")
    for i, document in enumerate(documents):  # One file per document, paragraphs of wrapped lines.
        (tmp_path / f"paragraphs{i:02d}.txt").write_text(
            " ".join(document[:3]).replace(" ", "\n", 4) + "\n\n" + " ".join(document[3:])
        )
    read = [[s.decode() for s in d] for d in document_dataset(str(sentences), document_buffer=1).as_numpy_iterator()]
    assert read == documents
    paragraphs = document_dataset(str(tmp_path / "paragraphs*.txt"), file_format="paragraphs", document_buffer=100)
    read = sorted([s.decode() for s in d] for d in paragraphs.as_numpy_iterator())
    assert read == sorted(split_sentences(" ".join(d[:3]) + "\n\n" + " ".join(d[3:])) for d in documents)


@pytest.mark.slow
def test_document_buffer_shuffles_deterministically(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("\n\n".join("\n".join(d) for d in default_corpus_documents()[:50]) + "\n")
    first = [d[0] for d in document_dataset(str(path), seed=1).as_numpy_iterator()]
    again = [d[0] for d in document_dataset(str(path), seed=1).as_numpy_iterator()]
    other = [d[0] for d in document_dataset(str(path), seed=2).as_numpy_iterator()]
    assert first == again != other and sorted(first) == sorted(other)
    assert isinstance(document_dataset(default_corpus_path()), tf.data.Dataset)
    assert np.all([len(d) for d in first])
