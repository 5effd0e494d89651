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

    The text is normalized and split into words by `BertNormalizer` (the same
    code `BertTokenizer` runs, so the same words as Hugging Face), words longer
    than `max_word_chars` are dropped (they tokenize to [UNK] anyway), and the
    word counts go to `keras_hub.tokenizers.compute_word_piece_vocabulary`
    (tf-text's WordPiece learner) with its own splitting and normalization off.

    Args:
        data: strings (a list, tuple or other iterable) or a `tf.data.Dataset`
            of tf.string scalars or batches.
        vocabulary_size: int. Maximum vocabulary size, reserved tokens included.
        lowercase: bool. Lowercase the text (use the same value for the tokenizer).
        strip_accents: bool or None. Strip accents; None means the same as `lowercase`.
        max_word_chars: int. Longer words are left out of the counts.
        reserved_tokens: strings put first, in this order (ids 0, 1, ...).
            Defaults to `[PAD] [UNK] [CLS] [SEP] [MASK]`.
        vocabulary_output_file: optional path; the vocabulary is also written
            there as a vocab.txt (one token a line).
        batch_size: int. Strings normalized per step.

    Returns:
        The vocabulary, a list of strings (reserved tokens, then characters
        and word pieces, "##" marking continuation pieces).

    Examples:

    >>> vocab = learn_wordpiece_vocabulary(
    ...     ["The quick brown fox.", "The lazy dog!"], vocabulary_size=40)
    >>> vocab[:5]
    ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']
    >>> tokenizer = BertTokenizer(vocab)  # doctest: +SKIP
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
    # Imported here, where it is used: keras_hub takes half a second to import,
    # which every process that imports keras_bert3 would otherwise pay.
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
