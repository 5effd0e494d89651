"""BERT text normalization and word splitting as TensorFlow graph ops.

Reproduces Hugging Face `tokenizers`' `BertNormalizer` + `BertPreTokenizer`
(the front half of `BertTokenizerFast`) from the per-code-point table in
`unicode_table.py`.
"""

import numpy as np
import tensorflow as tf

from keras_bert3.tokenizers import unicode_table

_PLACEHOLDER = -2  # Template cell that stands for the input code point itself.
_SPACE = 32


class BertNormalizer:
    """Normalizes strings and splits them into words exactly as Hugging Face BERT does.

    Each string is decoded to code points (invalid UTF-8 becomes U+FFFD, which
    is then removed, as Hugging Face removes U+FFFD). Each code point is looked
    up in the table: two `tf.searchsorted` calls over constant arrays, then one
    `tf.gather` of a fixed-width row of output code points padded with -1. The
    valid cells are re-encoded to UTF-8 and split on spaces. Everything is
    vectorised graph ops on constants (no lookup-table resources), so it runs in
    `tf.data`, in `tf.function` and in an exported SavedModel.

    Args:
        lowercase: bool. Lowercase the text (per code point, as Hugging Face).
        strip_accents: bool or None. Strip accents (NFD, then drop Mn marks,
            before lowercasing). None means the same as `lowercase`.

    Examples:

    >>> normalizer = BertNormalizer(lowercase=True)
    >>> normalizer.split_words(tf.constant(["Héllo, wörld…"])).to_list()
    [[b'hello', b',', b'world', b'\\xe2\\x80\\xa6']]
    >>> normalizer.normalize(tf.constant(["Straße\\u200b 東京"])).numpy()
    array([b'stra\\xc3\\x9fe  \\xe6\\x9d\\xb1  \\xe4\\xba\\xac '], dtype=object)
    """

    def __init__(self, *, lowercase: bool = True, strip_accents: bool | None = None):
        self.lowercase = bool(lowercase)
        self.strip_accents = self.lowercase if strip_accents is None else bool(strip_accents)
        table = unicode_table.load_unicode_table(self.lowercase, self.strip_accents)
        width = table.width
        templates = np.full((unicode_table.NUM_RULES, width), -1, dtype=np.int32)
        templates[unicode_table.KEEP, 0] = _PLACEHOLDER
        templates[unicode_table.SPACE, 0] = _SPACE
        templates[unicode_table.ISOLATE, :3] = [_SPACE, _PLACEHOLDER, _SPACE]
        explicit = np.full((len(table.explicit_code_points) + 1, width), -1, dtype=np.int32)
        explicit[:-1, : table.explicit_outputs.shape[1]] = table.explicit_outputs
        # A sentinel key above every code point keeps the key array non-empty.
        keys = np.append(table.explicit_code_points, unicode_table.MAX_CODE_POINT + 1)
        self._run_starts = table.run_starts.astype(np.int32)
        self._run_rules = table.run_rules.astype(np.int32)
        self._explicit_keys = keys.astype(np.int32)
        self._rows = np.concatenate([templates, explicit]).astype(np.int32)  # (rules + keys, width)

    def normalize_code_points(self, code_points: tf.Tensor) -> tf.Tensor:
        """Maps code points to their normalized output.

        Args:
            code_points: int32 tensor `(n,)`.

        Returns:
            int32 tensor `(n, width)`: each row holds the output code points of
            one input code point, 32 (space) between words, padded with -1.
        """
        code_points = tf.cast(code_points, tf.int32)
        run_starts = tf.constant(self._run_starts)
        run_index = tf.searchsorted(run_starts, code_points, side="right") - 1
        rule = tf.gather(tf.constant(self._run_rules), run_index)
        keys = tf.constant(self._explicit_keys)
        key_index = tf.searchsorted(keys, code_points, side="left")  # Never past the sentinel.
        is_explicit = tf.equal(tf.gather(keys, key_index), code_points)
        row = tf.where(is_explicit, key_index + unicode_table.NUM_RULES, rule)
        block = tf.gather(tf.constant(self._rows), row)  # (n, width)
        return tf.where(block == _PLACEHOLDER, code_points[:, None], block)

    def normalize(self, strings: tf.Tensor) -> tf.Tensor:
        """Normalizes a 1-D batch of strings; words end up separated by spaces.

        Args:
            strings: tf.string tensor `(batch,)`.

        Returns:
            tf.string tensor `(batch,)`. Splitting it on spaces gives the words.
        """
        decoded = tf.strings.unicode_decode(strings, "UTF-8", errors="replace")  # (batch, None)
        block = self.normalize_code_points(decoded.flat_values)  # (chars, width)
        valid = block >= 0
        counts = tf.reduce_sum(tf.cast(valid, tf.int64), axis=1)  # (chars,)
        cumulative = tf.concat([tf.zeros([1], tf.int64), tf.cumsum(counts)], axis=0)
        row_splits = tf.gather(cumulative, decoded.row_splits)  # (batch + 1,)
        output = tf.RaggedTensor.from_row_splits(tf.boolean_mask(block, valid), row_splits, validate=False)
        return tf.strings.unicode_encode(output, "UTF-8")

    def split_words(self, strings: tf.Tensor) -> tf.RaggedTensor:
        """Normalizes a 1-D batch of strings and splits it into words.

        Args:
            strings: tf.string tensor `(batch,)`.

        Returns:
            tf.string RaggedTensor `(batch, None)` of words.
        """
        # After normalization every ASCII whitespace byte is a plain space.
        return tf.strings.split(self.normalize(strings))

    def split_words_with_sources(self, strings: tf.Tensor) -> tuple[tf.RaggedTensor, tf.RaggedTensor]:
        """As `split_words`, plus where each character of each word comes from.

        Every output character comes from exactly one input code point (the
        table maps code points one at a time), so a word's characters point
        back into the original string.

        Args:
            strings: tf.string tensor `(batch,)`.

        Returns:
            words: tf.string RaggedTensor `(batch, None)`, as `split_words`.
            sources: int32 RaggedTensor `(batch, None, None)`: for each
                character (code point) of each word, the index of the code
                point of the input string it comes from (invalid UTF-8 counts
                as one U+FFFD code point per invalid sequence).

        Example:
        >>> words, sources = BertNormalizer().split_words_with_sources(tf.constant(["Hé, 東京"]))
        >>> sources.to_list()
        [[[0, 1], [2], [4], [5]]]
        """
        decoded = tf.strings.unicode_decode(strings, "UTF-8", errors="replace")  # (batch, chars)
        block = self.normalize_code_points(decoded.flat_values)  # (chars, width)
        char_rows = tf.cast(decoded.value_rowids(), tf.int32)
        char_index = tf.range(tf.shape(char_rows)[0]) - tf.gather(tf.cast(decoded.row_splits, tf.int32), char_rows)
        valid = block >= 0
        cells = tf.boolean_mask(block, valid)  # (cells,): output code points, in order.
        cell_sources = tf.boolean_mask(tf.broadcast_to(char_index[:, None], tf.shape(block)), valid)
        cell_rows = tf.boolean_mask(tf.broadcast_to(char_rows[:, None], tf.shape(block)), valid)
        in_word = tf.not_equal(cells, _SPACE)
        after_space = tf.concat([[True], ~in_word[:-1]], axis=0)
        new_row = tf.concat([[True], tf.not_equal(cell_rows[1:], cell_rows[:-1])], axis=0)
        starts = in_word & (after_space | new_row)  # (cells,): first character of a word.
        word_of_cell = tf.boolean_mask(tf.cumsum(tf.cast(starts, tf.int64)) - 1, in_word)
        num_words = tf.reduce_sum(tf.cast(starts, tf.int64))
        word_rows = tf.cast(tf.boolean_mask(cell_rows, starts), tf.int64)  # (words,)
        chars = tf.RaggedTensor.from_value_rowids(tf.boolean_mask(cells, in_word), word_of_cell, nrows=num_words)
        sources = tf.RaggedTensor.from_value_rowids(
            tf.boolean_mask(cell_sources, in_word), word_of_cell, nrows=num_words
        )
        batch = tf.shape(strings, out_type=tf.int64)[0]
        words = tf.RaggedTensor.from_value_rowids(tf.strings.unicode_encode(chars, "UTF-8"), word_rows, nrows=batch)
        return words, tf.RaggedTensor.from_value_rowids(sources, word_rows, nrows=batch)
