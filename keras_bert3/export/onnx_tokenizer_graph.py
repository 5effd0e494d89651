"""BERT's tokenizer as ONNX nodes, so that one `.onnx` file takes strings.

Standard ONNX ops plus onnxruntime-extensions' string ops, giving exactly `BertTokenizer`'s and
`BertSegmentJoiner`'s ids (that library's `BertTokenizer` op is not exact). BERT's normalization acts
on one character at a time, so it is one table, `character_table` (the tokenizer's own). Steps:
1. NUL becomes U+0001 (the string ops stop at a NUL). 2. Split into characters and special tokens.
3. `StringMapping` applies the table. 4. Pieces join back into one string a text, one character for
one. 5. Words split at spaces; WordPiece ids. 6. Truncation, `[CLS]`, `[SEP]`, segment ids, padding.
"""

import functools
import json

import numpy as np
from onnx import TensorProto

from keras_bert3.export.onnx_graph import GraphBuilder
from keras_bert3.export.onnx_index_ops import column_indices
from keras_bert3.export.onnx_index_ops import index_range
from keras_bert3.export.onnx_index_ops import length_of
from keras_bert3.export.onnx_index_ops import ones_like
from keras_bert3.export.onnx_index_ops import slice_of
from keras_bert3.export.onnx_index_ops import width_of
from keras_bert3.export.onnx_index_ops import zeros_of_shape
from keras_bert3.tokenizers.unicode_table import ISOLATE
from keras_bert3.tokenizers.unicode_table import KEEP
from keras_bert3.tokenizers.unicode_table import MAX_CODE_POINT
from keras_bert3.tokenizers.unicode_table import REMOVE
from keras_bert3.tokenizers.unicode_table import SPACE
from keras_bert3.tokenizers.unicode_table import load_unicode_table

STRING_OPS = "ai.onnx.contrib"  # onnxruntime-extensions' domain.
OPSETS = {"": 20, STRING_OPS: 1, "ai.onnx.ml": 3}  # 20 for the standard `StringSplit`.
DELETED = "\x01"  # A control character: BERT deletes it, so the table marks deletions with it.
ROW_END = "\x02"  # Another: never in the table's values, so it ends each text where they are joined.
PRIVATE_USE = ((0xE000, 0xF8FF), (0xF0000, 0xFFFFD), (0x100000, 0x10FFFD))  # `tokenizers` deletes these.
SURROGATES = (0xD800, 0xDFFF)


@functools.lru_cache(maxsize=4)
def character_table(lowercase: bool, strip_accents: bool | None) -> dict[str, str]:
    """What BERT's normalizer and pre-tokenizer make of each character they change, from the tokenizer's
    `load_unicode_table`: breaks as spaces, punctuation and CJK between spaces, `DELETED` for deletions.
    Private-use characters are left out (the graph deletes them with one regular expression)."""
    unicode = load_unicode_table(lowercase, strip_accents)
    codes = np.arange(MAX_CODE_POINT + 1)
    rules = unicode.run_rules[np.searchsorted(unicode.run_starts, codes, side="right") - 1]
    left_out = np.zeros(codes.shape, dtype=bool)
    for first, last in (SURROGATES,) + PRIVATE_USE:
        left_out[first : last + 1] = True
    explicit = dict(zip(unicode.explicit_code_points.tolist(), unicode.explicit_outputs.tolist()))
    by_rule = {REMOVE: lambda c: DELETED, SPACE: lambda c: " ", ISOLATE: lambda c: f" {c} "}
    table = {}
    for code in np.flatnonzero(((rules != KEEP) | np.isin(codes, unicode.explicit_code_points)) & ~left_out).tolist():
        character = chr(code)
        if code in explicit:
            changed = "".join(chr(c) for c in explicit[code] if c >= 0) or DELETED
        else:
            changed = by_rule[int(rules[code])](character)
        if changed != character:
            table[character] = changed
    return table


def without_nul(g: GraphBuilder, texts: str) -> str:
    """`texts` with each NUL character as `DELETED`, in standard ops (step 1)."""
    pieces, counts = g.op("StringSplit", [texts], outputs=2, delimiter="\x00")  # (texts, most), "" after the last
    column = column_indices(g, width_of(g, pieces))
    not_last = g.op("Less", [column, g.op("Unsqueeze", [g.op("Sub", [counts, g.const(1)]), g.const([1])])])
    pieces = g.op("Where", [not_last, g.op("StringConcat", [pieces, g.const(DELETED)]), pieces])
    return g.op("StringJoin", [pieces, g.const([""]), g.const([1])], domain=STRING_OPS)


def token_id_nodes(g: GraphBuilder, tokenizer, table: dict, texts: str) -> tuple[str, str]:
    """Steps 1-5: the int64 ids of all texts' word pieces, and where each text's ids start (`(texts + 1,)`)."""
    _, _, _, normalized = normalized_nodes(g, tokenizer, table, texts)
    ids, piece_counts, word_rows = wordpiece_nodes(g, tokenizer, normalized)
    return ids, text_row_starts(g, piece_counts, word_rows)


def text_row_starts(g: GraphBuilder, piece_counts: str, word_rows: str) -> str:
    """Where each text's ids start (`(texts + 1,)`), from `wordpiece_nodes`' counts and rows."""
    piece_ends = g.op("CumSum", [piece_counts, g.const(0)])
    return g.op("Gather", [g.op("Concat", [g.const([0]), piece_ends], axis=0), word_rows], axis=0)


def normalized_nodes(g: GraphBuilder, tokenizer, table: dict, texts: str) -> tuple[str, str, str, str]:
    """Steps 1-4: the flat `pieces` of all texts, `piece_rows` (`(texts + 1,)`), `mapped` (each piece
    normalized) and `normalized` (`(texts,)`, one character for each character of `mapped`)."""
    texts = without_nul(g, texts)
    special = tokenizer.special_tokens_in_text
    pattern = "((?s:.))"
    if special:  # Characters that start no special token, the common case, tried first.
        first_characters = "".join(sorted({f"\\x{{{ord(token[0]):X}}}" for token in special}))
        pattern = f"([^{first_characters}]|" + "".join(_re2_literal(token) + "|" for token in special) + "(?s:.))"
    pieces, _, _, piece_rows = g.op(
        "StringRegexSplitWithOffsets", [texts, g.const([pattern]), g.const([pattern])], outputs=4, domain=STRING_OPS
    )
    table = {**table, **{token: f" {token} " for token in special}}
    if table.get(ROW_END) != DELETED or any(ROW_END in value for value in table.values()):
        raise ValueError(f"A normalized text may hold {ROW_END!r}, which ends each text where they are joined.")
    mapping = "\n".join(f"{key}\t{value}" for key, value in table.items() if key not in "\t\n\r")  # Not keys.
    mapped = g.op("StringMapping", [pieces], domain=STRING_OPS, map=mapping)
    normalized = joined_rows(g, mapped, piece_rows)
    normalized = regex_replace(g, normalized, r"[\t\n\r]", " ")
    normalized = regex_replace(g, normalized, f"[{_character_ranges(PRIVATE_USE)}]", DELETED)
    return pieces, piece_rows, mapped, normalized


def wordpiece_nodes(g: GraphBuilder, tokenizer, normalized: str) -> tuple[str, str, str]:
    """Step 5: the int64 ids of all word pieces, the pieces of each word, each text's first word."""
    words, _, _, word_rows = g.op(
        "StringRegexSplitWithOffsets",
        [regex_replace(g, normalized, DELETED, ""), g.const(["( )"]), g.const([""])],
        outputs=4,
        domain=STRING_OPS,
    )
    vocabulary = {token: index for index, token in reversed(list(enumerate(tokenizer.vocabulary)))}
    pieces, piece_starts, _, _ = g.op(
        "WordpieceTokenizer",
        [words, g.const(np.zeros([0], "int64"))],
        outputs=4,
        domain=STRING_OPS,
        vocab=json.dumps(vocabulary, ensure_ascii=False),
        suffix_indicator="##",
        unknown_token=tokenizer.unk_token,
        max_input_chars_per_word=tokenizer.max_word_chars,
    )
    ids = g.op(
        "LabelEncoder",
        [pieces],
        domain="ai.onnx.ml",
        keys_strings=list(vocabulary),
        values_int64s=list(vocabulary.values()),
        default_int64=tokenizer.unk_token_id,
    )
    ids, piece_counts = _unknown_words_whole(g, ids, piece_starts, tokenizer.unk_token_id)
    return ids, piece_counts, word_rows


def _unknown_words_whole(g: GraphBuilder, ids: str, word_starts: str, unk_id: int) -> tuple[str, str]:
    """A word with an unknown piece as one unknown token, as BERT's WordPiece (`WordpieceTokenizer`
    keeps the pieces before it): the ids left, and each word's count."""
    starts, ends = slice_of(g, word_starts, 0, -1), slice_of(g, word_starts, 1, 2**62)
    unknown = g.op("Cast", [g.op("Equal", [ids, g.const(unk_id)])], to=TensorProto.INT64)
    unknown_before = g.op("Concat", [g.const([0]), g.op("CumSum", [unknown, g.const(0)])], axis=0)
    word_unknown = g.op(
        "Greater",
        [
            g.op(
                "Sub",
                [g.op("Gather", [unknown_before, ends], axis=0), g.op("Gather", [unknown_before, starts], axis=0)],
            ),
            g.const(0),
        ],
    )
    first_piece = g.op(
        "ScatterElements", [zeros_of_shape(g, g.op("Shape", [ids])), starts, ones_like(g, starts)], axis=0
    )
    word_of_piece = g.op("Sub", [g.op("CumSum", [first_piece, g.const(0)]), g.const(1)])
    in_unknown_word = g.op("Gather", [word_unknown, word_of_piece], axis=0)
    keep = g.op("Or", [g.op("Not", [in_unknown_word]), g.op("Equal", [first_piece, g.const(1)])])
    ids = g.op("Compress", [g.op("Where", [in_unknown_word, g.const(unk_id), ids]), keep], axis=0)
    return ids, g.op("Where", [word_unknown, g.const(1), g.op("Sub", [ends, starts])])


def joined_segment_nodes(
    g: GraphBuilder, preprocessor, ids: str, row_starts: str, *, pairs: bool, pair_names=("text", "text_pair")
) -> list[str]:
    """Step 6: int64 `(batch, longest)` token ids, segment ids and padding
    mask of `[CLS] a [SEP] (b [SEP])` rows, truncated as `BertSegmentJoiner`; with `pairs`, the texts are the
    `(batch,)` strings `pair_names` (nodes), each followed by ""."""
    tokenizer, length = preprocessor.tokenizer, preprocessor.sequence_length
    starts, ends = slice_of(g, row_starts, 0, -1), slice_of(g, row_starts, 1, 2**62)
    lengths = g.op("Sub", [ends, starts])
    if pairs:  # The first rows are `text` and "", the others `text_pair` and "".
        rows = g.op("Add", [g.op("Shape", [pair_names[0]]), g.const([1])])
        sizes = g.op("Concat", [rows, g.op("Add", [g.op("Shape", [pair_names[1]]), g.const([1])])], axis=0)
        first, second = g.op("Split", [lengths, sizes], outputs=2, axis=0)
        first_start, second_start = g.op("Split", [starts, sizes], outputs=2, axis=0)
        second = g.op("Reshape", [second, rows], "text_pair_rows_must_equal_text_rows")  # Fails where they differ.
        second_start = g.op("Reshape", [second_start, rows])
        first, second = _longest_first(g, first, second, length - 3)
        total = g.op("Add", [g.op("Add", [first, second]), g.const(3)])
    else:
        first, first_start = g.op("Min", [lengths, g.const(length - 2)]), starts
        second, second_start = g.op("Mul", [first, g.const(0)]), starts
        total = g.op("Add", [first, g.const(2)])
    longest = g.op("ReduceMax", [g.op("Concat", [total, g.const([2])], axis=0)], keepdims=0)
    position = column_indices(g, longest)
    column = lambda x: g.op("Unsqueeze", [x, g.const([1])])  # noqa: E731  (batch,) to (batch, 1).
    first, second, first_start, second_start, total = map(column, (first, second, first_start, second_start, total))
    second_begins = g.op("Add", [first, g.const(2)])
    in_first = g.op("And", [g.op("GreaterOrEqual", [position, g.const(1)]), g.op("LessOrEqual", [position, first])])
    in_second = g.op(
        "And",
        [
            g.op("GreaterOrEqual", [position, second_begins]),
            g.op("Less", [position, g.op("Add", [second_begins, second])]),
        ],
    )
    padded_ids = g.op("Concat", [ids, g.const([tokenizer.pad_token_id])], axis=0)
    pad_index = g.op("Sub", [g.op("Shape", [padded_ids]), g.const([1])])
    index = g.op(
        "Where",
        [
            in_first,
            g.op("Sub", [g.op("Add", [first_start, position]), g.const(1)]),
            g.op("Where", [in_second, g.op("Sub", [g.op("Add", [second_start, position]), second_begins]), pad_index]),
        ],
    )
    token_ids = g.op("Gather", [padded_ids, index], axis=0)
    is_sep = g.op("Equal", [position, g.op("Sub", [second_begins, g.const(1)])])
    if pairs:
        is_sep = g.op("Or", [is_sep, g.op("Equal", [position, g.op("Sub", [total, g.const(1)])])])
    token_ids = g.op("Where", [is_sep, g.const(tokenizer.sep_token_id), token_ids])
    token_ids = g.op("Where", [g.op("Equal", [position, g.const(0)]), g.const(tokenizer.cls_token_id), token_ids])
    padding_mask = g.op("Less", [position, total])
    segment_ids = g.op("And", [g.op("GreaterOrEqual", [position, second_begins]), padding_mask])
    return [token_ids, segment_ids, padding_mask]


def _longest_first(g: GraphBuilder, first: str, second: str, budget: int) -> tuple[str, str]:
    """The lengths two segments keep under "longest_first" truncation to
    `budget` tokens, as `bert_segment_joiner.longest_first_lengths`."""
    shorter = g.op("Min", [first, second])
    longer_keep = g.op(
        "Where",
        [
            g.op("Greater", [shorter, g.const(budget)]),
            shorter,
            g.op("Max", [shorter, g.op("Sub", [g.const(budget), shorter])]),
        ],
    )
    both_cut = g.op("Greater", [g.op("Add", [shorter, longer_keep]), g.const(budget)])
    shorter_keep = g.op("Where", [both_cut, g.const(budget // 2), shorter])
    longer_keep = g.op("Where", [both_cut, g.const(budget // 2 + budget % 2), longer_keep])
    first_is_longer = g.op("Greater", [first, second])
    first_keep = g.op("Where", [first_is_longer, longer_keep, shorter_keep])
    second_keep = g.op("Where", [first_is_longer, shorter_keep, longer_keep])
    return g.op("Min", [first_keep, first]), g.op("Min", [second_keep, second])


def joined_rows(g: GraphBuilder, values: str, row_starts: str) -> str:
    """Each row's `values` joined into one string, `(rows,)`: all joined at once with `ROW_END` after each row, then
    split at it, so that a row costs its own length, not the longest's. `values` must not contain `ROW_END`."""
    counts = g.op("Sub", [slice_of(g, row_starts, 1, 2**62), slice_of(g, row_starts, 0, -1)])
    ends = g.op("Add", [slice_of(g, row_starts, 1, 2**62), index_range(g, length_of(g, counts))])
    size = g.op("Add", [g.op("Shape", [values]), g.op("Shape", [counts])])  # Values and one `ROW_END` a row.
    is_end = g.op("ScatterElements", [zeros_of_shape(g, size), ends, ones_like(g, ends)], axis=0)  # Each `ROW_END`.
    ends_before = g.op("Sub", [g.op("CumSum", [is_end, g.const(0)]), is_end])
    position = index_range(g, g.op("Squeeze", [size]))
    index = g.op(
        "Where", [g.op("Equal", [is_end, g.const(1)]), g.op("Shape", [values]), g.op("Sub", [position, ends_before])]
    )
    flat = g.op("Gather", [g.op("Concat", [values, g.const([ROW_END])], axis=0), index], axis=0)
    joined = g.op("StringJoin", [flat, g.const([""]), g.const([0])], domain=STRING_OPS)
    rows, _ = g.op("StringSplit", [g.op("Reshape", [joined, g.const([1])])], outputs=2, delimiter=ROW_END)
    return g.op("Slice", [g.op("Reshape", [rows, g.const([-1])]), g.const([0]), g.op("Shape", [counts])])


def regex_replace(g: GraphBuilder, texts: str, pattern: str, rewrite: str) -> str:
    """`texts` with each match of the RE2 `pattern` rewritten (`\\1` for its group)."""
    return g.op("StringRegexReplace", [texts, g.const([pattern]), g.const([rewrite])], domain=STRING_OPS)


def _re2_literal(text: str) -> str:
    """`text` as an RE2 pattern that matches it literally."""
    return "".join(c if c.isalnum() or not c.isascii() else "\\" + c for c in text)


def _character_ranges(ranges) -> str:
    """`((first, last), ...)` code points as the inside of an RE2 character class."""
    return "".join(f"\\x{{{first:X}}}-\\x{{{last:X}}}" for first, last in ranges)
