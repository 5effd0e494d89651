"""Words to WordPieces and back as TensorFlow ops: Hugging Face's alignment, each
word's label on its first WordPiece (`word_ids()` of `is_split_into_words=True`)."""

import tensorflow as tf

IGNORED_LABEL = -100  # Hugging Face's ignore_index: tokens that are not a word's first piece.


def split_on_whitespace(texts) -> tf.RaggedTensor:
    """`(batch,)` strings to `(batch, None)` words, split at ASCII whitespace (invalid UTF-8
    replaced); other Unicode spaces stay inside a word, which `WhitespaceTokenizer` would cut mid-byte."""
    texts = tf.strings.unicode_transcode(texts, "UTF-8", "UTF-8", errors="replace")
    return tf.strings.split(texts)


def align_words(tokenizer, words: tf.RaggedTensor, sequence_length: int) -> tuple[tf.RaggedTensor, tf.RaggedTensor]:
    """Tokenizes pre-split words `(batch, None)`, each on its own as Hugging Face does.

    Returns int32 ragged `(token_ids, word_positions)`: each example's untruncated pieces, and
    each word's first piece position ([CLS] is 0), or -1 beyond `sequence_length` or without one."""
    pieces = tokenizer.tokenize(words.flat_values)  # (words in the batch, None)
    example_splits = tf.gather(pieces.row_splits, words.row_splits)
    start = pieces.row_splits[:-1] - tf.gather(example_splits, words.value_rowids())  # Within its example.
    kept = (pieces.row_lengths() > 0) & (start < sequence_length - 2)
    positions = tf.cast(tf.where(kept, start + 1, -1), tf.int32)
    token_ids = tf.RaggedTensor.from_row_splits(pieces.flat_values, example_splits, validate=False)
    return token_ids, words.with_flat_values(positions)


def token_labels(word_positions: tf.RaggedTensor, word_labels: tf.RaggedTensor, length) -> tf.Tensor:
    """Per-token labels int32 `(batch, length)`: each word's at its first piece, -100 elsewhere."""
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
    """Per-token values at each word's first piece, `(batch, words, ...)`; zeros where the position is -1."""
    gathered = tf.gather(token_values, tf.maximum(word_positions, 0), batch_dims=1)
    kept = tf.reshape(
        word_positions >= 0, tf.concat([tf.shape(word_positions), tf.ones([tf.rank(gathered) - 2], tf.int32)], 0)
    )
    return tf.where(kept, gathered, tf.zeros_like(gathered))
