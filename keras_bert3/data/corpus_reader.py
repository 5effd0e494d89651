"""Stage 1 of the pretraining pipeline, read: a corpus cut into byte ranges of about equal size, each read into
windows of documents by TensorFlow ops. A range is the unit of work every entry point shares out (a worker's
share of a pass, a `prepare-data` shard, a Beam element, a `tf.data` service split).
"""

import dataclasses
import os

import numpy as np
import tensorflow as tf

from keras_bert3.data.data_counters import DataCounters
from keras_bert3.data.pairing_config import FILE_FORMATS
from keras_bert3.data.sentence_splitter import split_sentences

# Bytes read at once: the documents that end in a block make a block of documents.
BLOCK_BYTES = 1 << 20
# Blocks of documents shuffled together and dealt into pairing groups (see `document_groups`).
WINDOW_BLOCKS = 4
# A streaming pass cuts the corpus into ranges of at most this many bytes.
RANGE_BYTES = 64 << 20
# A line is cut to this many bytes as it is read, bounding memory (far more than one example holds).
MAX_LINE_BYTES = 1 << 20


def expand_files(files: str | os.PathLike | list) -> list[str]:
    """A glob, a path, or a list of them, as a sorted list of paths.

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


@dataclasses.dataclass(frozen=True)
class CorpusRange:
    """Bytes `[start, end)` of the corpus's sorted files laid end to end. A document belongs to the range
    where it starts (its file's start, or the blank line before it); a "paragraphs" file is one document."""

    paths: tuple
    sizes: tuple
    start: int
    end: int
    file_format: str = "sentences"


def corpus_ranges(paths: list[str], count: int, file_format: str = "sentences", *, sizes=None) -> list[CorpusRange]:
    """Cuts the files into `count` ranges of equal bytes (the last takes the rest); `sizes`: if known already."""
    if file_format not in FILE_FORMATS:
        raise ValueError(f"file_format must be one of {FILE_FORMATS}, got {file_format!r}.")
    sizes = tuple(sizes) if sizes is not None else tuple(tf.io.gfile.stat(path).length for path in paths)
    total = sum(sizes)
    bounds = [total * i // count for i in range(count + 1)]
    return [CorpusRange(tuple(paths), sizes, bounds[i], bounds[i + 1], file_format) for i in range(count)]


def range_pieces(corpus_range: CorpusRange) -> list[tuple[str, int, int, int]]:
    """The range as `(path, size, start, end)` pieces of its files; a piece with `start` 0 holds its file's
    start (an empty file's piece belongs to the range at its offset)."""
    pieces, offset = [], 0
    total = sum(corpus_range.sizes)
    for path, size in zip(corpus_range.paths, corpus_range.sizes):
        start, end = corpus_range.start - offset, corpus_range.end - offset
        if size == 0:
            at_the_end = end == 0 and corpus_range.start < corpus_range.end == total  # The last file(s), empty.
            if start <= 0 < end or at_the_end:
                pieces.append((path, 0, 0, 0))
        elif end > 0 and start < size:
            pieces.append((path, size, max(start, 0), min(end, size)))
        offset += size
    return pieces


def range_reader(
    ranges: list[CorpusRange],
    *,
    max_document_sentences: int = 10_000,
    counters: DataCounters | None = None,
    window: int = WINDOW_BLOCKS,
    block_bytes: int = BLOCK_BYTES,
):
    """A function `read(position)` giving the documents of `ranges[position]` in windows of `window` blocks
    (a block: the documents that end in `block_bytes` of a file): a `tf.data.Dataset` of tf.string
    `tf.RaggedTensor`s `(documents, sentences)`, in file order. Blocks, not documents, pass between `tf.data`'s
    stages: per-element hand-offs would cost more than the work. "sentences" is TensorFlow ops alone (`tf.data`
    service workers can run it); "paragraphs" splits sentences in Python. A document longer than
    `max_document_sentences` continues as a new one. `counters` counts files, empty files and cut documents."""
    pieces = [range_pieces(corpus_range) for corpus_range in ranges]
    flat = [piece for range_of_pieces in pieces for piece in range_of_pieces] or [("", 0, 0, 0)]
    paths = tf.constant([piece[0] for piece in flat])
    sizes, starts, ends = (tf.constant([piece[k] for piece in flat], tf.int64) for k in (1, 2, 3))
    splits = tf.constant(np.cumsum([0] + [len(p) for p in pieces]), tf.int64)
    paragraphs = ranges[0].file_format == "paragraphs"

    @tf.autograph.experimental.do_not_convert  # Traced as written: its `if`s test Python values.
    def read_piece(index):
        path, size, start, end = paths[index], sizes[index], starts[index], ends[index]
        if paragraphs:
            windows = _paragraph_documents(path, start == 0, max_document_sentences)
        else:
            windows = _sentence_documents(path, size, start, end, max_document_sentences, block_bytes)
        if counters is None:
            return windows.map(lambda documents, cut: documents)
        count_file = tf.py_function(
            lambda is_start, is_empty: counters.add(files=int(is_start), empty_files=int(is_empty)),
            [start == 0, size == 0],
            [],
        )
        with tf.control_dependencies([count_file]):
            windows = windows.map(lambda documents, cut: (tf.identity(documents), cut))

        def count_cut(documents, cut):
            count = tf.py_function(
                lambda n: counters.add(split_documents=int(n)), [tf.reduce_sum(tf.cast(cut, tf.int32))], []
            )
            with tf.control_dependencies([count]):
                return tf.identity(documents)

        return windows.map(count_cut)

    @tf.autograph.experimental.do_not_convert  # Traced as written: no Python control flow.
    def read(position):
        pieces = tf.data.Dataset.range(splits[position], splits[position + 1])
        return pieces.flat_map(read_piece).ragged_batch(window).map(lambda blocks: blocks.merge_dims(0, 1))

    return read


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

    Formats: "sentences", the original BERT format (google-research/bert `create_pretraining_data.py`: one sentence
    a line, a blank line between documents); "paragraphs", plain prose (a file is a document, split into sentences
    by `split_sentences`). Ranges are read in a new order each pass and documents shuffled, deterministically for
    the seed. Bytes pass as they are (the tokenizing step handles invalid UTF-8).

    Args:
        files: a path, a glob (`"corpus/*.txt"`, `gs://` works), or a list of them.
        seed: int. Seeds the range order and the document shuffle.
        document_buffer: int. Documents held by the shuffle buffer.
        cycle_length: int. Ranges read at once.
        max_document_sentences: int. Longest document, in sentences.
        counters: optional `DataCounters`, updated while reading.

    Example:
    >>> documents = document_dataset("corpus/*.txt")  # doctest: +SKIP
    """
    ranges = streaming_ranges(expand_files(files), file_format)
    read = range_reader(ranges, max_document_sentences=max_document_sentences, counters=counters)
    positions = tf.data.Dataset.range(len(ranges)).shuffle(len(ranges), seed=seed, reshuffle_each_iteration=True)
    documents = positions.interleave(
        read, cycle_length=min(cycle_length, len(ranges)), num_parallel_calls=tf.data.AUTOTUNE, deterministic=True
    ).unbatch()
    return documents.shuffle(document_buffer, seed=seed, reshuffle_each_iteration=True)


def streaming_ranges(
    paths: list[str], file_format: str = "sentences", multiple_of: int = 1, *, range_bytes: int = RANGE_BYTES
) -> list[CorpusRange]:
    """The ranges of a streaming pass: at most `range_bytes` each, a multiple of `multiple_of` of them."""
    total = sum(tf.io.gfile.stat(path).length for path in paths)
    count = max(1, -(-total // range_bytes))
    return corpus_ranges(paths, -(-count // multiple_of) * multiple_of, file_format)


def _sentence_documents(path, size, start, end, max_sentences: int, block_bytes: int) -> tf.data.Dataset:
    """The documents that start in bytes `[start, end)` of one file, in blocks, with a flag per document cut
    at `max_sentences`; read from `start - 1` (the line under way there is not ours) to the first blank line at or
    after `end`."""
    first = tf.maximum(start - 1, 0)
    # A small range (a shard's) is read in one block of its size and a margin, not in `block_bytes`.
    block_bytes = tf.minimum(tf.constant(block_bytes, tf.int64), end - first + 65536)
    tail = (size - first) % block_bytes
    last = tf.maximum(tail, 1)
    blocks = tf.data.FixedLengthRecordDataset(path, block_bytes, header_bytes=first, footer_bytes=tail).concatenate(
        tf.data.FixedLengthRecordDataset(path, last, header_bytes=size - last).take(tf.minimum(tail, 1))
    )
    blocks = blocks.concatenate(tf.data.Dataset.from_tensors(tf.constant("\n")))  # Ends the last line.

    owner = tf.where(start == 0, tf.constant(0, tf.int64), tf.constant(-1, tf.int64))
    lines = blocks.scan((tf.constant(""), tf.constant(0, tf.int64), first, owner), _owned_lines(start, end))
    lines = lines.take_while(lambda kept, done: ~done).map(
        lambda kept, _done: kept
    )  # Unlike signatures: autograph parses each.
    lines = lines.concatenate(tf.data.Dataset.from_tensors(tf.constant([""])))  # Ends the last document.

    documents = tf.autograph.experimental.do_not_convert(
        lambda carry, lines: _block_documents(carry, lines, tf.constant(max_sentences))
    )
    return lines.scan(tf.zeros([0], tf.string), documents)


# Traced once a process, for any file and length: `scan` traces its function twice (the carry's shape is
# relaxed after the first), and every pipeline built in the process calls this graph instead of tracing it again.
@tf.function(
    autograph=False,
    input_signature=[
        tf.TensorSpec([None], tf.string),
        tf.TensorSpec([None], tf.string),
        tf.TensorSpec([], tf.int32),
    ],
)
def _block_documents(carry, lines, max_sentences):
    """Lines to documents on a block, each cut every `max_sentences` lines; the open document is carried into the
    next block. Returns `(carried lines, (documents as a ragged (documents, lines), cut flag per document))`."""
    lines = tf.concat([carry, lines], axis=0)
    blank = tf.equal(lines, "")
    document = tf.boolean_mask(tf.cumsum(tf.cast(blank, tf.int32), exclusive=True), ~blank)
    lines = tf.boolean_mask(lines, ~blank)
    open_document = tf.reduce_sum(tf.cast(blank, tf.int32))  # After the last blank line.
    # Position of each line in its document, and the piece of `max_sentences` it falls in.
    index = tf.range(tf.size(lines))
    first_line = tf.math.unsorted_segment_min(index, document, open_document + 1)
    piece = (index - tf.gather(first_line, document)) // max_sentences
    last_piece = tf.math.unsorted_segment_max(piece, document, open_document + 1)
    carried = (document == open_document) & (piece == tf.gather(last_piece, document))
    new_row = tf.concat([[True], (document[1:] != document[:-1]) | (piece[1:] != piece[:-1])], axis=0)
    row = tf.cumsum(tf.cast(new_row, tf.int32)) - 1
    emitted = ~carried  # The carried lines are the last ones: the emitted rows are 0, 1, ...
    rows = tf.RaggedTensor.from_value_rowids(
        tf.boolean_mask(lines, emitted), tf.cast(tf.boolean_mask(row, emitted), tf.int64)
    )
    cut = tf.boolean_mask(piece < tf.gather(last_piece, document), new_row & emitted)
    return tf.boolean_mask(lines, carried), (rows, cut)


def _owned_lines(start, end):
    """The scan function of `_sentence_documents` for the range `[start, end)`."""

    @tf.autograph.experimental.do_not_convert  # Traced as written: autograph would only slow this down.
    def owned_lines(state, block):
        """A block's lines: our documents' stripped lines, "" for the blank lines between them. The line
        under way is carried to the next block, at most `MAX_LINE_BYTES` of it (`dropped`: the bytes left out)."""
        carry, dropped, offset, owner = state
        parts = tf.strings.split(tf.strings.join([carry, block]), "\n")
        lines, rest = parts[:-1], parts[-1]
        lengths = tf.cast(tf.strings.length(lines), tf.int64) + 1
        lengths += dropped * tf.one_hot(0, tf.size(lines), dtype=tf.int64)  # The carried line's true length.
        offsets = offset + tf.cumsum(lengths, exclusive=True)
        # Cut only where a line is longer than the limit: a copy of every line would cost every block.
        too_long = tf.reduce_any(lengths > MAX_LINE_BYTES + 1)
        stripped = tf.strings.strip(
            tf.cond(too_long, lambda: tf.strings.substr(lines, 0, MAX_LINE_BYTES), lambda: lines)
        )
        blank = tf.equal(stripped, "") & (offsets >= start)  # Not the end of the line under way at `start`.
        blank_offsets = tf.concat([[owner], tf.boolean_mask(offsets, blank)], axis=0)
        owners = tf.gather(blank_offsets, tf.cumsum(tf.cast(blank, tf.int32), exclusive=True))
        ours = tf.not_equal(stripped, "") & (owners >= start) & (owners < end)
        kept = tf.boolean_mask(tf.where(ours, stripped, ""), ours | blank)
        over = tf.maximum(tf.cast(tf.strings.length(rest), tf.int64) - MAX_LINE_BYTES, 0)
        dropped = tf.where(tf.size(lines) > 0, tf.constant(0, tf.int64), dropped) + over
        carry = tf.strings.substr(rest, 0, MAX_LINE_BYTES)
        return (carry, dropped, offset + tf.reduce_sum(lengths), blank_offsets[-1]), (kept, owner >= end)

    return owned_lines


def _paragraph_documents(path, owned, max_sentences: int) -> tf.data.Dataset:
    """A prose file as one document (cut every `max_sentences` sentences), if `owned` (it starts in the range)."""

    def generate(path: bytes, owned: bool):
        if owned:
            for document, cut in read_paragraphs(path.decode(), max_sentences):
                yield np.array(document, dtype=object), cut

    spec = (tf.TensorSpec([None], tf.string), tf.TensorSpec([], tf.bool))
    return tf.data.Dataset.from_generator(generate, output_signature=spec, args=(path, owned)).ragged_batch(64)


def read_paragraphs(path: str, max_sentences: int):
    """A prose file as one document, its paragraphs split into sentences; yields `(sentences, was_cut)`."""
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
