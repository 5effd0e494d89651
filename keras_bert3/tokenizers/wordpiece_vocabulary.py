"""Learns a WordPiece vocabulary on text normalized and split exactly as `BertTokenizer` does."""

import os
from collections.abc import Iterable

import tensorflow as tf

from keras_bert3.tokenizers.bert_normalizer import BertNormalizer

DEFAULT_RESERVED_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def learn_wordpiece_vocabulary(
    data: Iterable[str] | tf.data.Dataset,
    vocabulary_size: int,
    *,
    lowercase: bool = True,
    strip_accents: bool | None = None,
    max_word_chars: int = 100,
    reserved_tokens: Iterable[str] = DEFAULT_RESERVED_TOKENS,
    vocabulary_output_file: str | os.PathLike | None = None,
    batch_size: int = 1024,
) -> list[str]:
    """Learns a WordPiece vocabulary for `BertTokenizer`.

    Words are split by `BertNormalizer` (as `BertTokenizer` splits them) and
    counted by `keras_hub.tokenizers.compute_word_piece_vocabulary` (tf-text's
    learner); words over `max_word_chars` are left out (they would be [UNK]).

    Args:
        data: an iterable of strings, or a `tf.data.Dataset` of tf.string scalars or batches.
        vocabulary_size: int. Maximum vocabulary size, reserved tokens included.
        strip_accents: bool or None. None means the same as `lowercase`.
        reserved_tokens: strings put first, in this order (ids 0, 1, ...).
        vocabulary_output_file: optional path to also write a vocab.txt to.

    Returns:
        A list of strings: reserved tokens, then pieces ("##" marks continuations).

    Examples:
    >>> learn_wordpiece_vocabulary(["The quick brown fox.", "The lazy dog!"], vocabulary_size=40)[:5]
    ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']
    """
    if not isinstance(data, tf.data.Dataset):
        data = tf.data.Dataset.from_tensor_slices(tf.constant(list(data), dtype=tf.string))
    if data.element_spec.shape.rank == 0:
        data = data.batch(batch_size)
    normalizer = BertNormalizer(lowercase=lowercase, strip_accents=strip_accents)

    def split(strings: tf.Tensor) -> tf.Tensor:
        words = normalizer.split_words(strings).flat_values
        return tf.boolean_mask(words, tf.strings.length(words, unit="UTF8_CHAR") <= max_word_chars)

    words = data.map(split, num_parallel_calls=tf.data.AUTOTUNE)
    # Imported here: keras_hub is slow to import, and most processes never need it.
    from keras_hub.tokenizers import compute_word_piece_vocabulary

    vocabulary = compute_word_piece_vocabulary(
        words,
        vocabulary_size,
        lowercase=False,
        strip_accents=False,
        split=False,
        suffix_indicator="##",
        reserved_tokens=list(reserved_tokens),
    )
    if vocabulary_output_file is not None:
        with open(vocabulary_output_file, "w", encoding="utf-8") as f:
            f.writelines(token + "\n" for token in vocabulary)
    return vocabulary
