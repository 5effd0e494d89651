"""The corpus reader: byte ranges of any count, read by TensorFlow ops a block
at a time, hold every document of a messy corpus once, as the original script
reads it (a plain reading of the files in Python is the oracle)."""

import pytest
import tensorflow as tf

from keras_bert3.data.corpus_reader import corpus_ranges
from keras_bert3.data.corpus_reader import range_reader
from keras_bert3_demo import default_corpus_documents

pytestmark = pytest.mark.backend_free  # The pipeline is TensorFlow under either backend: one pass.

# Blank lines of spaces and tabs, CRLF, a document cut by the cap, no final newline.
MESSY = "\n\n  First doc, line one.  \r\nline two\n\n\n\t\nSecond.\nThird line\nfourth\nfifth\nsixth\n\nlast line, no newline"


def plain_reading(path, cap, max_line_bytes=None):
    """Documents as the original script reads them, cut every `cap` lines
    (and each line to its first `max_line_bytes`)."""
    documents, document = [], []
    with open(path, "rb") as f:
        for line in f:
            line = line.rstrip(b"\n")[:max_line_bytes].strip()
            if line:
                document.append(line)
            if document and (not line or len(document) >= cap):
                documents.append(document)
                document = []
    return documents + ([document] if document else [])


@pytest.fixture(scope="module")
def messy_corpus(tmp_path_factory):
    """Three files: the messy text repeated, an empty file, real documents."""
    directory = tmp_path_factory.mktemp("messy")
    (directory / "a.txt").write_text(MESSY * 7, encoding="utf-8")
    (directory / "b.txt").write_bytes(b"")
    documents = default_corpus_documents()[:8]
    (directory / "c.txt").write_text("\n\n".join("\n".join(d) for d in documents) + "\n", encoding="utf-8")
    return sorted(str(path) for path in directory.glob("*.txt"))


@pytest.mark.slow
@pytest.mark.parametrize("cap", [10_000, 2])
@pytest.mark.parametrize("count, block_bytes", [(1, 4 << 20), (3, 7), (7, 64), (64, 4 << 20), (500, 1000)])
def test_ranges_hold_every_document_once(messy_corpus, cap, count, block_bytes):
    expected = sorted(tuple(document) for path in messy_corpus for document in plain_reading(path, cap))
    read = range_reader(
        corpus_ranges(messy_corpus, count), max_document_sentences=cap, block_bytes=block_bytes, window=5
    )
    windows = tf.data.Dataset.range(count).flat_map(read).as_numpy_iterator()
    documents = [tuple(document) for window in windows for document in window.tolist()]
    assert sorted(documents) == expected
    assert max(len(document) for document in documents) <= cap


def test_a_range_reads_its_documents_in_file_order(messy_corpus):
    path = messy_corpus[2]
    read = range_reader(corpus_ranges([path], 1), block_bytes=100, window=7)
    documents = [list(document) for window in read(tf.constant(0, tf.int64)).as_numpy_iterator() for document in window]
    assert documents == plain_reading(path, 10_000)


@pytest.mark.parametrize("count, block_bytes", [(1, 4 << 20), (3, 1 << 20), (7, 300_000), (20, 70_000)])
def test_lines_longer_than_the_limit_are_cut_as_they_are_read(messy_corpus, tmp_path, count, block_bytes):
    """Memory stays bounded whatever a line's length: each line is kept to
    its first `MAX_LINE_BYTES` as it is read, across blocks too and inside
    one; the documents after a long line are read as before."""
    from keras_bert3.data.corpus_reader import MAX_LINE_BYTES

    long = tmp_path / "long.txt"
    words = "Der Fluß fließt über 200 km. " * (MAX_LINE_BYTES // 10)  # 3 MiB or so, two-byte characters among them.
    lines = ["short one", words, "", "next document", words[: MAX_LINE_BYTES + 1], words[:MAX_LINE_BYTES], "", "last"]
    long.write_text("\n".join(lines) * 2, encoding="utf-8")
    paths = [*messy_corpus, str(long)]
    expected = sorted(tuple(document) for path in paths for document in plain_reading(path, 10_000, MAX_LINE_BYTES))
    read = range_reader(corpus_ranges(paths, count), block_bytes=block_bytes, window=5)
    windows = tf.data.Dataset.range(count).flat_map(read).as_numpy_iterator()
    assert sorted(tuple(document) for window in windows for document in window.tolist()) == expected
