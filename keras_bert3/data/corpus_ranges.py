"""A corpus cut into byte ranges of about equal size, each read on its own:
the unit of work that `prepare_pretraining_data`'s processes (or Beam's
workers) share out. Files of any size and number give balanced ranges."""

import dataclasses

import tensorflow as tf

from keras_bert3.data.document_dataset import _read_paragraphs


@dataclasses.dataclass(frozen=True)
class CorpusRange:
    """Bytes `[start, end)` of the corpus seen as its files laid end to end
    (sorted). A document belongs to the range where it starts: at the start of
    a file, or after a blank line (the original format) or a file start
    ("paragraphs", one document a file)."""

    paths: tuple
    sizes: tuple
    start: int
    end: int
    file_format: str = "sentences"


def corpus_ranges(paths: list[str], count: int, file_format: str = "sentences") -> list[CorpusRange]:
    """Cuts the files into `count` ranges of equal bytes (the last one takes the rest).

    Example:
    >>> ranges = corpus_ranges(expand_files("corpus/*.txt"), 64)  # doctest: +SKIP
    """
    sizes = tuple(tf.io.gfile.stat(path).length for path in paths)
    total = sum(sizes)
    bounds = [total * i // count for i in range(count + 1)]
    return [CorpusRange(tuple(paths), sizes, bounds[i], bounds[i + 1], file_format) for i in range(count)]


def range_documents(corpus_range: CorpusRange, max_sentences: int = 10_000):
    """Yields the documents that start in the range: lists of sentence bytes
    (stripped lines; "paragraphs" split into sentences). A document cut at
    `max_sentences` continues as a new document, as `document_dataset` does."""
    offset = 0
    for path, size in zip(corpus_range.paths, corpus_range.sizes):
        start, end = corpus_range.start - offset, corpus_range.end - offset
        offset += size
        if end <= 0 or start >= size or size == 0:
            continue
        if corpus_range.file_format == "paragraphs":
            if start <= 0:  # The file is one document, owned by the range where it starts.
                for document, _ in _read_paragraphs(path, max_sentences):
                    yield document
            continue
        yield from _file_range_documents(path, max(start, 0), end, max_sentences)


def _file_range_documents(path: str, start: int, end: int, max_sentences: int):
    """Documents of one file of the original format that start in `[start, end)`:
    after a blank line at an offset in the range, or at offset 0."""
    with tf.io.gfile.GFile(path, "rb") as f:
        position = 0
        if start > 0:
            f.seek(start - 1)
            position = start - 1 + len(f.readline())  # The first line starting at or after `start`.
            # Skip the document under way: ours start after a blank line.
            while True:
                line = f.readline()
                if not line:
                    return
                position += len(line)
                if not line.strip():
                    if position - len(line) >= end:
                        return
                    break
        document = []
        while True:
            line_start = position
            line = f.readline()
            position += len(line)
            if not line:
                break
            line = line.strip()
            if line:
                document.append(line)
                if len(document) >= max_sentences:
                    yield document
                    document = []
            else:
                if document:
                    yield document
                    document = []
                if line_start >= end:  # The next document belongs to the next range.
                    return
        if document:
            yield document
