"""BERT WordPiece tokenizer as TensorFlow graph ops, id-for-id equal to Hugging Face's
`BertTokenizerFast` (Devlin et al., 2019: greedy longest-match-first WordPiece)."""

import os
import re
import warnings

import keras
import tensorflow as tf
import tensorflow_text as tf_text

from keras_bert3.tokenizers.bert_normalizer import BertNormalizer
from keras_bert3.tokenizers.bert_segment_joiner import BertSegmentJoiner
from keras_bert3.traced_once import traced_once
from keras_bert3.upstream.string_input_layer import StringInputLayer

# Hugging Face's `clean_up_tokenization`, applied in this order by `detokenize`.
_CLEAN_UP = [
    (" .", "."),
    (" ?", "?"),
    (" !", "!"),
    (" ,", ","),
    (" ' ", "'"),
    (" n't", "n't"),
    (" 'm", "'m"),
    (" 's", "'s"),
    (" 've", "'ve"),
    (" 're", "'re"),
]


def load_vocabulary(vocabulary: str | os.PathLike | list[str] | tuple[str, ...]) -> list[str]:
    """Returns the vocabulary as a list: as given, or read from a vocab.txt (one token a line)."""
    if isinstance(vocabulary, (str, os.PathLike)):
        with open(vocabulary, encoding="utf-8") as f:
            return [line.rstrip("\r\n") for line in f]
    return [str(token) for token in vocabulary]


@keras.saving.register_keras_serializable(package="keras_bert3")
class BertTokenizer(StringInputLayer):
    """BERT WordPiece tokenizer that runs as TensorFlow ops and matches Hugging Face exactly.

    The ids equal `transformers.BertTokenizerFast(vocab_file, do_lower_case=lowercase,
    strip_accents=strip_accents)(text, add_special_tokens=False)`. Words go through `BertNormalizer`, then tf-text's
    `FastWordpieceTokenizer`. One TF path serves eager and graph calls alike (unlike a `keras_hub` tokenizer), so it
    runs in `tf.data` and SavedModels. With `strip_accents=True`, rare combining spacing marks are not reordered (see
    `unicode_table.py`).

    Args:
        vocabulary: list of str, or path to a vocab.txt (the line number is the id).
        lowercase: bool. `do_lower_case`; True for "uncased" checkpoints.
        strip_accents: bool or None. None means the same as `lowercase`.
        max_word_chars: int. Longer words (after normalization) become the
            unknown token (`max_input_chars_per_word`).
        cls_token, sep_token, pad_token, mask_token, unk_token: str. Each must be in the vocabulary.
        special_tokens_in_strings: bool. Map special token strings in the text
            (case-sensitive, longest first) to their ids, as Hugging Face.

    Examples:
    >>> tokenizer = BertTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "qu", "##ick", "fox", "!"])
    >>> tokenizer("The QUICK fox!").numpy()
    array([5, 6, 7, 8, 9], dtype=int32)
    >>> tokenizer.detokenize([5, 6, 7, 8, 9]).numpy()
    b'the quick fox!'
    """

    def __init__(
        self,
        vocabulary: str | os.PathLike | list[str],
        *,
        lowercase: bool = True,
        strip_accents: bool | None = None,
        max_word_chars: int = 100,
        cls_token: str = "[CLS]",
        sep_token: str = "[SEP]",
        pad_token: str = "[PAD]",
        mask_token: str = "[MASK]",
        unk_token: str = "[UNK]",
        special_tokens_in_strings: bool = True,
        **kwargs,
    ):
        kwargs.setdefault("dtype", "int32")
        super().__init__(**kwargs)
        self.vocabulary = load_vocabulary(vocabulary)
        self.lowercase = bool(lowercase)
        self.strip_accents = strip_accents
        self.max_word_chars = int(max_word_chars)
        self.cls_token = cls_token
        self.sep_token = sep_token
        self.pad_token = pad_token
        self.mask_token = mask_token
        self.unk_token = unk_token
        self.special_tokens_in_strings = bool(special_tokens_in_strings)

        self._token_to_id = {}  # The first of a duplicated token wins, as in tf-text.
        for i, token in enumerate(self.vocabulary):
            self._token_to_id.setdefault(token, i)
        special = {
            "cls_token": cls_token,
            "sep_token": sep_token,
            "pad_token": pad_token,
            "mask_token": mask_token,
            "unk_token": unk_token,
        }
        self._check_special_tokens(special)
        self.cls_token_id = self._token_to_id[cls_token]
        self.sep_token_id = self._token_to_id[sep_token]
        self.pad_token_id = self._token_to_id[pad_token]
        self.mask_token_id = self._token_to_id[mask_token]
        self.unk_token_id = self._token_to_id[unk_token]

        self._special_tokens = sorted(set(special.values()), key=len, reverse=True)  # Leftmost-longest match.
        self._special_pattern = "|".join(re.escape(token) for token in self._special_tokens)
        self._normalizer = BertNormalizer(lowercase=self.lowercase, strip_accents=strip_accents)
        self._wordpiece = self._fast_wordpiece()
        self.built = True

    def _check_special_tokens(self, special: dict[str, str]) -> None:
        """Raises a `ValueError` naming the special tokens the vocabulary lacks."""
        missing = [f"{name}={token!r}" for name, token in special.items() if token not in self._token_to_id]
        if missing:
            raise ValueError(
                f"The vocabulary ({len(self.vocabulary)} tokens) lacks the special tokens "
                f"{', '.join(missing)}. Add them to the vocabulary (`learn_wordpiece_vocabulary` "
                "adds them), or pass the strings your vocabulary uses for them, "
                "e.g. `BertTokenizer(vocab, mask_token='<mask>')`."
            )

    def _fast_wordpiece(self) -> tf_text.FastWordpieceTokenizer:
        """tf-text's WordPiece on the vocabulary, for words already split and normalized."""
        return tf_text.FastWordpieceTokenizer(
            vocab=self.vocabulary,
            suffix_indicator="##",
            max_bytes_per_word=4 * self.max_word_chars,  # The character limit is applied before.
            token_out_type=tf.int32,
            unknown_token=self.unk_token,
            no_pretokenization=True,
            support_detokenization=False,
        )

    def vocabulary_size(self) -> int:
        """Number of tokens in the vocabulary."""
        return len(self.vocabulary)

    def get_vocabulary(self) -> list[str]:
        """The vocabulary as a list of strings, indexed by id."""
        return list(self.vocabulary)

    def id_to_token(self, id: int) -> str:
        """The token string of one id."""
        if not 0 <= int(id) < len(self.vocabulary):
            raise ValueError(f"id {id} is out of range for a vocabulary of {len(self.vocabulary)} tokens.")
        return self.vocabulary[int(id)]

    def token_to_id(self, token: str) -> int:
        """The id of one token string (a whole vocabulary entry, e.g. "##ing")."""
        if token not in self._token_to_id:
            raise ValueError(f"Token {token!r} is not in the vocabulary.")
        return self._token_to_id[token]

    @property
    def special_token_ids(self) -> list[int]:
        """Ids of [CLS], [SEP], [PAD], [MASK] and [UNK] (in that order)."""
        return [self.cls_token_id, self.sep_token_id, self.pad_token_id, self.mask_token_id, self.unk_token_id]

    @property
    def special_tokens_in_text(self) -> list[str]:
        """The special token strings matched inside the text (longest first), if any."""
        return list(self._special_tokens) if self.special_tokens_in_strings else []

    def split_words(self, inputs) -> tf.RaggedTensor:
        """Strings to words (Hugging Face pre-tokens): `(words,)` for a scalar, `(batch, None)` for a batch."""
        strings, scalar = self._to_batch(inputs)
        words = self._split_words(strings)
        return words[0] if scalar else words

    def _split_words(self, strings: tf.Tensor) -> tf.RaggedTensor:
        """`(batch,)` strings to `(batch, None)` words; special tokens are words of their own."""
        if not self.special_tokens_in_strings:
            return self._normalizer.split_words(strings)
        # regex_split cuts a string at NUL; U+0001 is removed by the normalizer just as NUL.
        strings = tf.strings.regex_replace(strings, "\\x00", "\x01")
        pieces = tf_text.regex_split(strings, self._special_pattern, self._special_pattern)  # (batch, None)
        flat_pieces = pieces.flat_values
        is_special = tf.reduce_any(tf.equal(flat_pieces[:, None], tf.constant(self._special_tokens)[None, :]), axis=1)
        words = self._normalizer.split_words(tf.where(is_special, "", flat_pieces))  # (pieces, None)
        special_words = tf.RaggedTensor.from_row_lengths(
            tf.boolean_mask(flat_pieces, is_special), tf.cast(is_special, tf.int64)
        )
        words = tf.concat([words, special_words], axis=1)  # A piece is text or one special token.
        return tf.RaggedTensor.from_row_splits(
            words.flat_values, tf.gather(words.row_splits, pieces.row_splits), validate=False
        )

    def tokenize(self, inputs) -> tf.Tensor | tf.RaggedTensor:
        """Strings to WordPiece ids (no special tokens added): int32 `(tokens,)` or ragged `(batch, None)`."""
        strings, scalar = self._to_batch(inputs)
        ids = self._run(self._batch_tokenize, strings)
        return ids[0] if scalar else ids

    def _run(self, batch_method, strings: tf.Tensor, *settings):
        """`batch_method(strings, *settings)`: called as it is when eager, and inside a graph being built (a `tf.data`
        map, a serving function) as a graph traced once for this tokenizer, so that pipelines and exports built again
        call it instead of tracing the tokenizer again."""
        if tf.executing_eagerly():
            return batch_method(strings, *settings)
        function = batch_method.__func__  # Unbound: the traced graph holds the tokenizer weakly.
        traced = traced_once(
            self,
            (function.__name__, settings),
            lambda tokenizer, strings: function(tokenizer, strings, *settings),
            input_signature=[tf.TensorSpec([None], tf.string)],
        )
        return traced(strings)

    def _batch_tokenize(self, strings: tf.Tensor) -> tf.RaggedTensor:
        """`(batch,)` strings to ragged `(batch, None)` ids."""
        words = self._split_words(strings)  # (batch, None)
        flat_words = words.flat_values
        too_long = tf.strings.length(flat_words, unit="UTF8_CHAR") > self.max_word_chars
        flat_words = tf.where(too_long, tf.constant(self.unk_token), flat_words)
        pieces = self._wordpiece.tokenize(flat_words)  # (words, None)
        return tf.RaggedTensor.from_row_splits(
            pieces.flat_values, tf.gather(pieces.row_splits, words.row_splits), validate=False
        )

    def tokenize_with_offsets(self, inputs, *, word_offsets: bool = False):
        """Strings to WordPiece ids and where each piece is in the original string.

        Returns `(ids, starts, ends)` (and with `word_offsets` the span of each piece's
        word), int32 `(tokens,)` for a scalar or ragged `(batch, None)`. Offsets count
        characters: `text[start:end]` is the piece's source (`return_offsets_mapping=True`).
        """
        strings, scalar = self._to_batch(inputs)
        outputs = self._run(self._batch_tokenize_with_offsets, strings, bool(word_offsets))
        return tuple(output[0] for output in outputs) if scalar else outputs

    def _batch_tokenize_with_offsets(self, strings: tf.Tensor, word_offsets: bool) -> tuple:
        """`(batch,)` strings to the ragged `(batch, None)` outputs of `tokenize_with_offsets`."""
        words, sources = self._split_words_with_sources(strings)  # (batch, words), (batch, words, chars)
        flat_words, word_sources = words.flat_values, sources.values  # (words,), (words, chars)
        too_long = tf.strings.length(flat_words, unit="UTF8_CHAR") > self.max_word_chars
        pieces, byte_starts, byte_ends = self._wordpiece.tokenize_with_offsets(
            tf.where(too_long, tf.constant(self.unk_token), flat_words)
        )  # (words, pieces)
        # Piece byte offsets -> characters of the word -> code points of the input.
        word_bytes = tf.strings.length(flat_words)
        word_base = tf.cumsum(word_bytes, exclusive=True)  # Each word's first byte, all words concatenated.
        _, char_bytes = tf.strings.unicode_decode_with_offsets(flat_words, "UTF-8")  # (words, chars)
        char_global = tf.cast(char_bytes.flat_values, tf.int32) + tf.gather(word_base, char_bytes.value_rowids())
        piece_word = pieces.value_rowids()
        piece_too_long = tf.gather(too_long, piece_word)
        first_byte = tf.where(piece_too_long, 0, tf.cast(byte_starts.flat_values, tf.int32))
        end_byte = tf.where(piece_too_long, tf.gather(word_bytes, piece_word), tf.cast(byte_ends.flat_values, tf.int32))
        first_char = tf.searchsorted(char_global, first_byte + tf.gather(word_base, piece_word), side="left")
        end_char = tf.searchsorted(char_global, end_byte + tf.gather(word_base, piece_word), side="left")
        sources_flat = word_sources.flat_values
        starts = tf.gather(sources_flat, first_char)
        ends = tf.gather(sources_flat, end_char - 1) + 1
        row_splits = tf.gather(pieces.row_splits, words.row_splits)

        def batched(values):
            return tf.RaggedTensor.from_row_splits(values, row_splits, validate=False)

        outputs = [batched(pieces.flat_values), batched(starts), batched(ends)]
        if word_offsets:
            word_starts = tf.gather(sources_flat, word_sources.row_splits[:-1])
            word_ends = tf.gather(sources_flat, word_sources.row_splits[1:] - 1) + 1
            outputs += [batched(tf.gather(word_starts, piece_word)), batched(tf.gather(word_ends, piece_word))]
        return tuple(outputs)

    def _split_words_with_sources(self, strings: tf.Tensor):
        """`_split_words` plus, per character of each word, its code point index in the input."""
        if not self.special_tokens_in_strings:
            return self._normalizer.split_words_with_sources(strings)
        strings = tf.strings.regex_replace(strings, "\\x00", "\x01")  # As in _split_words.
        pieces, piece_begins, _ = tf_text.regex_split_with_offsets(
            strings, self._special_pattern, self._special_pattern
        )
        flat_pieces = pieces.flat_values
        is_special = tf.reduce_any(tf.equal(flat_pieces[:, None], tf.constant(self._special_tokens)[None, :]), axis=1)
        words, sources = self._normalizer.split_words_with_sources(tf.where(is_special, "", flat_pieces))
        special_words = tf.RaggedTensor.from_row_lengths(
            tf.boolean_mask(flat_pieces, is_special), tf.cast(is_special, tf.int64)
        )
        special_lengths = tf.strings.length(tf.boolean_mask(flat_pieces, is_special), unit="UTF8_CHAR")
        special_sources = tf.RaggedTensor.from_row_lengths(
            tf.ragged.range(special_lengths), tf.cast(is_special, tf.int64)
        )  # (pieces, 0 or 1, chars)
        words = tf.concat([words, special_words], axis=1)
        sources = tf.concat([sources, special_sources], axis=1)  # (pieces, words, chars), relative to the piece.
        # Each piece's first character in its string: its byte offset, counted in characters.
        string_base = tf.cumsum(tf.strings.length(strings), exclusive=True)
        _, char_bytes = tf.strings.unicode_decode_with_offsets(strings, "UTF-8", errors="replace")
        char_global = char_bytes.flat_values + tf.gather(tf.cast(string_base, tf.int64), char_bytes.value_rowids())
        begin_global = piece_begins.flat_values + tf.gather(tf.cast(string_base, tf.int64), piece_begins.value_rowids())
        piece_char = tf.searchsorted(char_global, begin_global, side="left", out_type=tf.int64) - tf.gather(
            char_bytes.row_splits, piece_begins.value_rowids()
        )
        word_piece, char_word = sources.nested_value_rowids()
        shift = tf.cast(tf.gather(piece_char, tf.gather(word_piece, char_word)), sources.flat_values.dtype)
        sources = sources.with_flat_values(sources.flat_values + shift)
        return (
            tf.RaggedTensor.from_row_splits(
                words.flat_values, tf.gather(words.row_splits, pieces.row_splits), validate=False
            ),
            tf.RaggedTensor.from_row_splits(
                sources.values, tf.gather(sources.row_splits, pieces.row_splits), validate=False
            ),
        )

    def call(self, inputs) -> tf.Tensor | tf.RaggedTensor:
        return self.tokenize(inputs)

    def detokenize(self, inputs) -> tf.Tensor:
        """Ids `(tokens,)` or `(batch, None)` back to text: a scalar, or `(batch,)` strings.

        As `decode(..., clean_up_tokenization_spaces=True)`: special tokens are
        kept; lowercasing, stripped accents and [UNK] words cannot be undone."""
        if not isinstance(inputs, (tf.Tensor, tf.RaggedTensor)):
            inputs = tf.ragged.constant(inputs) if _is_nested_ragged(inputs) else tf.convert_to_tensor(inputs)
        tokens = tf.gather(tf.constant(self.vocabulary), tf.cast(inputs, tf.int32))
        text = tf.strings.reduce_join(tokens, axis=-1, separator=" ")
        text = tf.strings.regex_replace(text, " ##", "")
        for old, new in _CLEAN_UP:
            text = tf.strings.regex_replace(text, _re_escape(old), new)
        return text

    def join_segments(self, first, second=None, *, sequence_length: int = 512) -> dict[str, tf.Tensor]:
        """Tokenizes strings (or pairs) and joins them as `BertSegmentJoiner` does: int32
        `token_ids`, `segment_ids`, `padding_mask` `(batch, sequence_length)` (or unbatched)."""
        joiner = BertSegmentJoiner(
            sequence_length=sequence_length,
            cls_token_id=self.cls_token_id,
            sep_token_id=self.sep_token_id,
            pad_token_id=self.pad_token_id,
        )
        first_ids = self.tokenize(first)
        second_ids = None if second is None else self.tokenize(second)
        return joiner(first_ids, second_ids)

    def pack(self, first, second=None, *, sequence_length: int = 512) -> dict[str, tf.Tensor]:
        """Deprecated: the old name of `join_segments`."""
        warnings.warn("BertTokenizer.pack is deprecated; use join_segments.", DeprecationWarning, stacklevel=2)
        return self.join_segments(first, second, sequence_length=sequence_length)

    @classmethod
    def from_preset(cls, preset: str, **kwargs) -> "BertTokenizer":
        """Loads the vocabulary and casing of a preset: keras_bert3, a Hugging Face BERT directory, keras-hub, or a
        handle (see `BertBackbone.from_preset`). `kwargs` override the config."""
        from keras_bert3.presets.tokenizer_preset import load_tokenizer

        return load_tokenizer(preset, cls=cls, **kwargs)

    def save_to_preset(self, preset_dir: str) -> None:
        """Writes `vocabulary.txt` and `tokenizer.json` into a keras_bert3 preset directory."""
        from keras_bert3.presets.tokenizer_preset import save_tokenizer

        save_tokenizer(self, preset_dir)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(
            {
                "vocabulary": list(self.vocabulary),
                "lowercase": self.lowercase,
                "strip_accents": self.strip_accents,
                "max_word_chars": self.max_word_chars,
                "cls_token": self.cls_token,
                "sep_token": self.sep_token,
                "pad_token": self.pad_token,
                "mask_token": self.mask_token,
                "unk_token": self.unk_token,
                "special_tokens_in_strings": self.special_tokens_in_strings,
            }
        )
        return config

    @staticmethod
    def _to_batch(inputs) -> tuple[tf.Tensor, bool]:
        if not isinstance(inputs, tf.Tensor):
            inputs = tf.convert_to_tensor(inputs, dtype=tf.string)
        rank = inputs.shape.rank
        if rank == 0:
            return inputs[None], True
        if rank == 1:
            return inputs, False
        raise ValueError(f"Expected a scalar or a 1-D batch of strings, got shape {inputs.shape}.")


def _is_nested_ragged(values) -> bool:
    return isinstance(values, (list, tuple)) and any(isinstance(v, (list, tuple)) for v in values)


def _re_escape(text: str) -> str:
    return "".join("\\" + ch if ch in ".?!" else ch for ch in text)
