"""The readers of the original format: TensorFlow ops that group lines into
documents a block at a time, checked against a plain reading of the file."""

import numpy as np
import pytest

from keras_bert3.corpora import default_corpus_documents
from keras_bert3.data.document_dataset import _sentence_line_documents
from keras_bert3.data.document_dataset import document_groups

MESSY = "\n\n  First doc, line one.  \r\nline two\n\n\n\t\nSecond.\nThird line\nfourth\nfifth\nsixth\n\nlast line, no newline"


def plain_reading(path, cap):
    """Documents as the original script reads them, cut every `cap` lines."""
    documents, document = [], []
    with open(path, "rb") as f:
        for line in f:
            line = line.strip()
            if line:
                document.append(line)
            if document and (not line or len(document) >= cap):
                documents.append(document)
                document = []
    return documents + ([document] if document else [])


@pytest.mark.parametrize("cap, lines_per_block", [(10_000, 4096), (2, 3), (3, 1), (1, 2), (4, 5)])
def test_blocks_of_documents_read_as_the_original(tmp_path, cap, lines_per_block):
    path = tmp_path / "messy.txt"
    path.write_bytes(MESSY.encode())
    blocks = _sentence_line_documents(str(path), cap, lines_per_block)
    read = [[bytes(s) for s in document] for document, _ in blocks.unbatch().as_numpy_iterator()]
    assert read == plain_reading(path, cap)
    cut = [bool(split) for _, split in blocks.unbatch().as_numpy_iterator()]
    whole = plain_reading(path, 10_000)
    assert sum(cut) == sum(len(d) // cap - (len(d) % cap == 0) for d in whole)  # Cut, with a piece after.


def test_groups_hold_every_document_once_per_pass(tmp_path):
    documents = default_corpus_documents()[:300]
    path = tmp_path / "corpus.txt"
    path.write_text("\n\n".join("\n".join(d) for d in documents) + "\n")
    groups = document_groups(str(path), 64, seed=4)
    first = [[[s.decode() for s in d] for d in g] for g in groups.as_numpy_iterator()]
    second = [[[s.decode() for s in d] for d in g] for g in groups.as_numpy_iterator()]
    sizes = [len(g) for g in first]
    assert min(sizes) >= 32 and max(sizes) <= 64 and sum(sizes) == 300
    for one_pass in (first, second):
        assert sorted(map(tuple, (d for g in one_pass for d in g))) == sorted(map(tuple, documents))
    assert first != second  # Each pass shuffles anew...
    again = [[[s.decode() for s in d] for d in g] for g in document_groups(str(path), 64, seed=4).as_numpy_iterator()]
    assert again == first  # ...deterministically for the seed.
    assert np.mean([d in documents[:150] for d in first[0]]) < 0.9  # Shuffled, not in file order.
