"""BERT text normalization and word splitting as TensorFlow graph ops: Hugging Face's
`BertNormalizer` + `BertPreTokenizer`, from the per-code-point table of `unicode_table.py`."""

import numpy as np
import tensorflow as tf

from keras_bert3.tokenizers import unicode_table

_PLACEHOLDER = -2  # Template cell that stands for the input code point itself.
_SPACE = 32


class BertNormalizer:
    """Normalizes strings and splits them into words exactly as Hugging Face BERT does.

    Code points are looked up in the table with `tf.searchsorted` and `tf.gather`
    over constants (no lookup-table resources), so it runs in `tf.data` and SavedModels.

    Args:
        strip_accents: bool or None. NFD, then drop Mn marks, before lowercasing.
            None means the same as `lowercase`.

    Examples:
    >>> BertNormalizer(lowercase=True).split_words(tf.constant(["Héllo, wörld…"])).to_list()
    [[b'hello', b',', b'world', b'\\xe2\\x80\\xa6']]
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
        """int32 code points `(n,)` to their outputs `(n, width)`: 32 (space) between words, padded with -1."""
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
        """Normalizes tf.string `(batch,)`; words end up separated by spaces."""
        decoded = tf.strings.unicode_decode(strings, "UTF-8", errors="replace")  # (batch, None)
        block = self.normalize_code_points(decoded.flat_values)  # (chars, width)
        valid = block >= 0
        counts = tf.reduce_sum(tf.cast(valid, tf.int64), axis=1)  # (chars,)
        cumulative = tf.concat([tf.zeros([1], tf.int64), tf.cumsum(counts)], axis=0)
        row_splits = tf.gather(cumulative, decoded.row_splits)  # (batch + 1,)
        output = tf.RaggedTensor.from_row_splits(tf.boolean_mask(block, valid), row_splits, validate=False)
        return tf.strings.unicode_encode(output, "UTF-8")

    def split_words(self, strings: tf.Tensor) -> tf.RaggedTensor:
        """Normalizes tf.string `(batch,)` and splits it into words `(batch, None)`."""
        # After normalization every ASCII whitespace byte is a plain space.
        return tf.strings.split(self.normalize(strings))

    def split_words_with_sources(self, strings: tf.Tensor) -> tuple[tf.RaggedTensor, tf.RaggedTensor]:
        """As `split_words`, plus `sources`: int32 `(batch, None, None)`, for each character of each word the index of
        the input code point it comes from (an invalid UTF-8 sequence counts as one)."""
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
