"""Words to WordPieces and back, as TensorFlow ops (tf.data, SavedModels):
Hugging Face's token-classification alignment, where each word's label goes
to the word's first WordPiece (`word_ids()` of `is_split_into_words=True`)."""

import tensorflow as tf

IGNORED_LABEL = -100  # Hugging Face's ignore_index: tokens that are not a word's first piece.


def split_on_whitespace(texts) -> tf.RaggedTensor:
    """`(batch,)` strings to `(batch, None)` words, split at ASCII whitespace.

    Invalid UTF-8 is replaced by U+FFFD first, so the words are valid UTF-8.
    The separators are space, tab, newline, carriage return, form feed and
    vertical tab (Python's `str.split()` on ASCII text); other Unicode spaces
    stay inside a word (the BERT tokenizer still splits there, and the word's
    label goes to its first piece). (tf-text's `WhitespaceTokenizer` would cut
    multi-byte spaces in the middle of their bytes.)
    """
    texts = tf.strings.unicode_transcode(texts, "UTF-8", "UTF-8", errors="replace")
    return tf.strings.split(texts)


def align_words(tokenizer, words: tf.RaggedTensor, sequence_length: int) -> tuple[tf.RaggedTensor, tf.RaggedTensor]:
    """Tokenizes pre-split words and finds each word's first piece.

    Each word is tokenized on its own (as Hugging Face does for
    `is_split_into_words=True`: a word may still become several pre-tokens,
    e.g. "os.walk" -> "os" "." "walk", all of that word). The pieces of an
    example are truncated to `sequence_length - 2` (room for [CLS] and [SEP]),
    as Hugging Face's `truncation=True`.

    Args:
        tokenizer: a `BertTokenizer`.
        words: string RaggedTensor `(batch, None)`.
        sequence_length: int. The sequence length, [CLS] and [SEP] included.

    Returns:
        `(token_ids, word_positions)`: int32 RaggedTensor `(batch, None)` of
        the example's pieces (untruncated; `BertSegmentJoiner` truncates), and int32
        RaggedTensor `(batch, None)` like `words`: the position of each word's
        first piece in the sequence ([CLS] is position 0), or -1 when
        the word has no piece there (it lies beyond `sequence_length`, or it
        tokenizes to nothing, e.g. an empty string or only control characters).
    """
    pieces = tokenizer.tokenize(words.flat_values)  # (words in the batch, None)
    example_splits = tf.gather(pieces.row_splits, words.row_splits)  # Piece offsets of the examples.
    start = pieces.row_splits[:-1] - tf.gather(example_splits, words.value_rowids())  # Within its example.
    kept = (pieces.row_lengths() > 0) & (start < sequence_length - 2)
    positions = tf.cast(tf.where(kept, start + 1, -1), tf.int32)
    token_ids = tf.RaggedTensor.from_row_splits(pieces.flat_values, example_splits, validate=False)
    return token_ids, words.with_flat_values(positions)


def token_labels(word_positions: tf.RaggedTensor, word_labels: tf.RaggedTensor, length) -> tf.Tensor:
    """Word labels to per-token labels: int32 `(batch, length)`, the word's
    label at its first piece, `IGNORED_LABEL` (-100) everywhere else."""
    positions = word_positions.flat_values
    kept = positions >= 0
    indices = tf.stack([tf.cast(word_positions.value_rowids(), tf.int32), positions], axis=1)
    shape = tf.stack([word_positions.nrows(out_type=tf.int32), tf.cast(length, tf.int32)])
    return tf.tensor_scatter_nd_update(
        tf.fill(shape, IGNORED_LABEL),
        tf.boolean_mask(indices, kept),
        tf.boolean_mask(tf.cast(word_labels.flat_values, tf.int32), kept),
    )


def gather_words(token_values: tf.Tensor, word_positions: tf.Tensor) -> tf.Tensor:
    """Per-token values `(batch, length, ...)` at each word's first piece:
    `(batch, words, ...)`, zeros where `word_positions` (dense, `(batch, words)`) is -1."""
    gathered = tf.gather(token_values, tf.maximum(word_positions, 0), batch_dims=1)
    kept = tf.reshape(
        word_positions >= 0, tf.concat([tf.shape(word_positions), tf.ones([tf.rank(gathered) - 2], tf.int32)], 0)
    )
    return tf.where(kept, gathered, tf.zeros_like(gathered))
