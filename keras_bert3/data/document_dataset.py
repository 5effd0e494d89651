"""Corpus readers: text files (by glob) to a `tf.data.Dataset` of documents,
interleaved and shuffled through a bounded buffer so memory stays flat."""

import os

import numpy as np
import tensorflow as tf

from keras_bert3.data.data_counters import DataCounters
from keras_bert3.data.sentence_splitter import split_sentences

FILE_FORMATS = ("sentences", "paragraphs")


def expand_files(files: str | os.PathLike | list) -> list[str]:
    """Expands a glob, a path, or a list of them, into a sorted list of paths.

    Raises:
        ValueError: if nothing matches, or every matched file is empty.
    """
    patterns = [files] if isinstance(files, (str, os.PathLike)) else list(files)
    paths = sorted({path for pattern in patterns for path in tf.io.gfile.glob(os.fspath(pattern))})
    paths = [path for path in paths if not tf.io.gfile.isdir(path)]
    if not paths:
        raise ValueError(f"No file matches {[os.fspath(p) for p in patterns]}: check the path or glob.")
    if all(tf.io.gfile.stat(path).length == 0 for path in paths):
        raise ValueError(f"The corpus is empty: all {len(paths)} files matching {patterns} have 0 bytes.")
    return paths


def document_dataset(
    files: str | os.PathLike | list,
    *,
    file_format: str = "sentences",
    seed: int = 0,
    document_buffer: int = 1000,
    cycle_length: int = 4,
    max_document_sentences: int = 10_000,
    counters: DataCounters | None = None,
) -> tf.data.Dataset:
    """Reads text files into a dataset of documents, each a 1-D tf.string tensor of sentences.

    Formats:
    - "sentences": the original BERT format (google-research/bert
      `create_pretraining_data.py`): one sentence a line, a blank line between documents.
    - "paragraphs": plain prose; each file is one document, its paragraphs (blank-line
      separated, lines joined) split into sentences by `split_sentences`.

    Files are shuffled, read `cycle_length` at a time (interleaved), and documents
    pass through a shuffle buffer of `document_buffer` documents; each iteration
    reshuffles, deterministically for the seed. Bytes are passed through as they
    are (invalid UTF-8 is handled by the tokenizing step). A document longer than
    `max_document_sentences` is cut so that no document is unbounded.

    Args:
        files: a path, a glob (`"corpus/*.txt"`, `gs://` works), or a list of them.
        file_format: "sentences" or "paragraphs".
        seed: int. Seeds the file order and the document shuffle.
        document_buffer: int. Documents held by the shuffle buffer.
        cycle_length: int. Files read at once.
        max_document_sentences: int. Longest document, in sentences.
        counters: optional `DataCounters`, updated while reading.

    Returns:
        `tf.data.Dataset` of tf.string tensors of shape `(sentences,)`.

    Examples:

    >>> documents = document_dataset(default_corpus_path())
    >>> next(iter(documents))[:2]  # doctest: +SKIP
    """
    if file_format not in FILE_FORMATS:
        raise ValueError(f"file_format must be one of {FILE_FORMATS}, got {file_format!r}.")
    paths = expand_files(files)
    counters = counters if counters is not None else DataCounters()
    read = _read_sentence_lines if file_format == "sentences" else _read_paragraphs

    def generate(path: bytes):
        counters.files += 1
        empty = True
        for document in read(path.decode(), max_document_sentences, counters):
            empty = False
            yield np.array(document, dtype=object)
        counters.empty_files += empty

    spec = tf.TensorSpec([None], tf.string)
    dataset = tf.data.Dataset.from_tensor_slices(paths)
    dataset = dataset.shuffle(len(paths), seed=seed, reshuffle_each_iteration=True)
    dataset = dataset.interleave(
        lambda path: tf.data.Dataset.from_generator(generate, output_signature=spec, args=(path,)),
        cycle_length=min(cycle_length, len(paths)),
        block_length=1,
    )
    return dataset.shuffle(document_buffer, seed=seed, reshuffle_each_iteration=True)


def _read_sentence_lines(path: str, max_sentences: int, counters: DataCounters):
    document = []
    with tf.io.gfile.GFile(path, "rb") as f:
        for line in f:
            line = line.strip()
            if line:
                document.append(line)
            if document and (not line or len(document) >= max_sentences):
                counters.split_documents += bool(line)
                yield document
                document = []
    if document:
        yield document


def _read_paragraphs(path: str, max_sentences: int, counters: DataCounters):
    document, paragraph = [], []

    def flush():
        text = b" ".join(paragraph).decode("utf-8", "surrogateescape")
        document.extend(s.encode("utf-8", "surrogateescape") for s in split_sentences(text))
        paragraph.clear()

    with tf.io.gfile.GFile(path, "rb") as f:
        for line in f:
            line = line.strip()
            if line:
                paragraph.append(line)
            elif paragraph:
                flush()
            if len(document) >= max_sentences:
                counters.split_documents += 1
                yield document
                document = []
    if paragraph:
        flush()
    if document:
        yield document
