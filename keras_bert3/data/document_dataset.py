"""Corpus readers: text files (by glob) to a `tf.data.Dataset` of documents or
of groups of documents, interleaved and shuffled in bounded windows so memory
stays flat."""

import os

import numpy as np
import tensorflow as tf

from keras_bert3.data.data_counters import DataCounters
from keras_bert3.data.seed_stream import seed_stream
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

    Files are shuffled, read `cycle_length` at a time (in parallel, a block of
    lines at a time), and documents pass through a shuffle buffer of
    `document_buffer` documents; each iteration reshuffles, deterministically
    for the seed. Bytes are passed through as they are (invalid UTF-8 is
    handled by the tokenizing step). A document longer than
    `max_document_sentences` is cut so that no document is unbounded.
    (`document_groups` gives the same documents in shuffled groups, faster.)

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
    blocks = _document_blocks(files, file_format, seed=seed, cycle_length=cycle_length,
                              max_document_sentences=max_document_sentences, counters=counters)  # fmt: skip
    return blocks.unbatch().shuffle(document_buffer, seed=seed, reshuffle_each_iteration=True)


def document_groups(
    files: str | os.PathLike | list,
    group_size: int,
    *,
    file_format: str = "sentences",
    seed: int = 0,
    cycle_length: int = 4,
    max_document_sentences: int = 10_000,
    counters: DataCounters | None = None,
    reproducible: bool = True,
) -> tf.data.Dataset:
    """Reads text files into shuffled groups of about `group_size` documents.

    The documents of `cycle_length` consecutive blocks (one per file read at
    once, a few thousand documents) are shuffled together and dealt into groups
    of `group_size` (the last ones of a window evenly smaller, never under half
    unless the window is). Every step handles a block or a group, never a
    single document, so that `tf.data` spreads the work over cores.

    Args:
        files, file_format, seed, cycle_length, max_document_sentences,
            counters: as `document_dataset`.
        group_size: int. Documents per group.
        reproducible: bool. False: the deal's seeds also take in the clock (see `seed_stream`).

    Returns:
        `tf.data.Dataset` of tf.string `tf.RaggedTensor`s `(documents, sentences)`.

    Example:
    >>> groups = document_groups(default_corpus_path(), 256)
    >>> next(iter(groups)).shape  # doctest: +SKIP
    TensorShape([256, None])
    """
    blocks = _document_blocks(files, file_format, seed=seed, cycle_length=cycle_length,
                              max_document_sentences=max_document_sentences, counters=counters)  # fmt: skip
    windows = blocks.batch(cycle_length)  # (blocks, documents, sentences)
    seeds = seed_stream(seed, reproducible=reproducible)
    deal = tf.autograph.experimental.do_not_convert(  # Traced as written, as `paired_examples`.
        lambda window, window_seed: deal_into_groups(window.merge_dims(0, 1), group_size, window_seed)
    )
    # Deals in parallel too: a window's shuffle is a few ms that would otherwise hold one core.
    return tf.data.Dataset.zip(windows, seeds).map(deal, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True).unbatch()


def deal_into_groups(documents: tf.RaggedTensor, group_size: int, seed) -> tf.RaggedTensor:
    """Shuffles documents `(documents, sentences)` and deals them into groups of
    about `group_size` (evenly smaller where they do not divide):
    `(groups, documents, sentences)`. `seed`: a stateless seed, shape (2,)."""
    count = documents.nrows(out_type=tf.int32)
    order = tf.argsort(tf.random.stateless_uniform([count], seed))
    documents = tf.gather(documents, order)
    groups = tf.maximum((count + group_size - 1) // group_size, 1)
    sizes = count // groups + tf.cast(tf.range(groups) < count % groups, tf.int32)
    return tf.RaggedTensor.from_row_lengths(documents, tf.cast(sizes, tf.int64))


def _document_blocks(files, file_format, *, seed, cycle_length, max_document_sentences, counters):
    """Blocks of documents: tf.string `tf.RaggedTensor`s (documents, sentences).

    The original format is read by TensorFlow ops alone (`TextLineDataset`,
    lines grouped into documents a block at a time), files in parallel;
    "paragraphs" splits sentences in Python (`split_sentences`). Blocks, not
    single documents, cross between `tf.data`'s threads: per-element hand-offs
    cost more than the work on more than one core. Counts of files, empty
    files and cut documents go to `counters` through one small Python call per
    file or block.
    """
    paths = expand_files(files)
    empty = [tf.io.gfile.stat(path).length == 0 for path in paths]
    dataset = tf.data.Dataset.from_tensor_slices((paths, empty))
    dataset = dataset.shuffle(len(paths), seed=seed, reshuffle_each_iteration=True)
    if counters is not None:

        def count_file(path, is_empty):
            add = lambda is_empty: counters.add(files=1, empty_files=int(is_empty))  # noqa: E731
            with tf.control_dependencies([tf.py_function(add, [is_empty], [])]):
                return tf.identity(path), is_empty

        dataset = dataset.map(count_file)
    if file_format == "sentences":
        read = lambda path, is_empty: _sentence_line_documents(path, max_document_sentences)  # noqa: E731
        parallel = tf.data.AUTOTUNE
    else:

        def generate(path: bytes):
            for document, split in _read_paragraphs(path.decode(), max_document_sentences):
                yield np.array(document, dtype=object), split

        spec = (tf.TensorSpec([None], tf.string), tf.TensorSpec([], tf.bool))
        read = lambda path, is_empty: tf.data.Dataset.from_generator(  # noqa: E731
            generate, output_signature=spec, args=(path,)
        ).ragged_batch(64)
        parallel = None
    options = {"num_parallel_calls": parallel, "deterministic": True} if parallel else {}
    blocks = dataset.interleave(read, cycle_length=min(cycle_length, len(paths)), block_length=1, **options)

    def count_splits(documents, split):
        if counters is None:
            return documents
        add = lambda count: counters.add(split_documents=int(count))  # noqa: E731
        with tf.control_dependencies([tf.py_function(add, [tf.reduce_sum(tf.cast(split, tf.int32))], [])]):
            return tf.identity(documents)

    return blocks.map(count_splits)


def _sentence_line_documents(path, max_sentences: int, lines_per_block: int = 4096) -> tf.data.Dataset:
    """One file of the original format, in blocks of documents: a document per
    run of non-blank lines (stripped), cut every `max_sentences` lines; with a
    flag for the cut ones.

    Lines are grouped into documents a block of lines at a time with vector
    ops; the open document at the end of a block (at most `max_sentences`
    lines) is carried into the next.
    """
    lines = tf.data.TextLineDataset(path).concatenate(tf.data.Dataset.from_tensors(""))  # Ends the last document.
    blocks = lines.batch(lines_per_block)

    @tf.autograph.experimental.do_not_convert  # Traced as written, as `paired_examples`.
    def step(carry, block):
        lines = tf.concat([carry, tf.strings.strip(block)], axis=0)
        blank = tf.equal(lines, "")
        document = tf.boolean_mask(tf.cumsum(tf.cast(blank, tf.int32), exclusive=True), ~blank)
        lines = tf.boolean_mask(lines, ~blank)
        open_document = tf.reduce_sum(tf.cast(blank, tf.int32))  # After the last blank line.
        # Position of each line in its document, and the piece of `max_sentences` it falls in.
        index = tf.range(tf.size(lines))
        first = tf.math.unsorted_segment_min(index, document, open_document + 1)
        piece = (index - tf.gather(first, document)) // max_sentences
        last_piece = tf.math.unsorted_segment_max(piece, document, open_document + 1)
        carried = (document == open_document) & (piece == tf.gather(last_piece, document))
        new_row = tf.concat([[True], (document[1:] != document[:-1]) | (piece[1:] != piece[:-1])], axis=0)
        row = tf.cumsum(tf.cast(new_row, tf.int32)) - 1
        emitted = ~carried  # The carried lines are the last ones: the emitted rows are 0, 1, ...
        rows = tf.RaggedTensor.from_value_rowids(tf.boolean_mask(lines, emitted), tf.cast(tf.boolean_mask(row, emitted), tf.int64))
        split = tf.boolean_mask(piece < tf.gather(last_piece, document), new_row & emitted)
        return tf.boolean_mask(lines, carried), (rows, split)

    return blocks.scan(tf.zeros([0], tf.string), step)


def _read_paragraphs(path: str, max_sentences: int):
    """Plain prose: a file is a document; its paragraphs (blank-line separated,
    lines joined) are split into sentences. Yields (sentences, was_split)."""
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
                yield document, True
                document = []
    if paragraph:
        flush()
    if document:
        yield document, False
