"""Regenerates keras_bert3/tokenizers/bert_unicode_table.json.gz: what the installed Hugging Face `tokenizers`'
BertNormalizer and BertPreTokenizer make of each code point, for each (lowercase, strip_accents).

Command (from the repository root, after upgrading `tokenizers`; tests/tokenizers/bert_normalizer_test.py then checks
the table against it on every code point):

    python tools/regenerate_unicode_table.py
"""

import gzip
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from keras_bert3.tokenizers.unicode_table import ISOLATE, KEEP, MAX_CODE_POINT, REMOVE, SPACE, TABLE_PATH, table_key


def _all_code_points():
    return [c for c in range(MAX_CODE_POINT + 1) if not 0xD800 <= c <= 0xDFFF]


def hf_output(normalizer, pre_tokenizer, text: str) -> str:
    """Hugging Face's normalized, pre-tokenized `text`, words joined by spaces
    (wrapped in "a" ... "a" so that a separator at either end shows)."""
    normalized = normalizer.normalize_str(text)
    words = pre_tokenizer.pre_tokenize_str("a" + normalized + "a")
    return " ".join(w for w, _ in words)[1:-1]


def _build_entry(lowercase: bool, strip_accents: bool) -> dict:
    from tokenizers import normalizers, pre_tokenizers

    normalizer = normalizers.BertNormalizer(
        clean_text=True,
        handle_chinese_chars=True,
        strip_accents=strip_accents,
        lowercase=lowercase,
    )
    pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    rules = np.full(MAX_CODE_POINT + 1, -1, dtype=np.int64)  # -1: explicit or surrogate.
    explicit = {}
    for c in _all_code_points():
        ch = chr(c)
        out = hf_output(normalizer, pre_tokenizer, ch)
        if out == ch:
            rules[c] = KEEP
        elif out == "":
            rules[c] = REMOVE
        elif out.strip(" ") == "":
            rules[c] = SPACE
        elif out == f" {ch} ":
            rules[c] = ISOLATE
        else:
            # Collapse space runs but keep one at each end (it matters for joining neighbours).
            words = [w for w in out.split(" ") if w]
            explicit[c] = (" " if out.startswith(" ") else "") + " ".join(words) + (" " if out.endswith(" ") else "")
    # Explicit code points and surrogates join the run before them.
    for c in range(MAX_CODE_POINT + 1):
        if rules[c] < 0:
            rules[c] = rules[c - 1] if c else KEEP
    change = np.flatnonzero(np.diff(rules)) + 1
    starts = np.concatenate([[0], change])
    codes = sorted(explicit)
    return {
        "run_start_deltas": np.diff(starts, prepend=0).tolist(),
        "run_rules": rules[starts].tolist(),
        "explicit_deltas": np.diff(codes, prepend=0).tolist(),
        "explicit_outputs": [explicit[c] for c in codes],
    }


def main() -> None:
    """Regenerates `bert_unicode_table.json.gz` from the installed `tokenizers`."""
    import tokenizers

    data = {"tokenizers_version": tokenizers.__version__, "tables": {}}
    for lowercase in (True, False):
        for strip_accents in (True, False):
            entry = _build_entry(lowercase, strip_accents)
            data["tables"][table_key(lowercase, strip_accents)] = entry
            print(
                f"{table_key(lowercase, strip_accents)}: {len(entry['run_rules'])} runs, "
                f"{len(entry['explicit_outputs'])} explicit code points"
            )
    with gzip.GzipFile(TABLE_PATH, "wb", compresslevel=9, mtime=0) as f:
        f.write(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    print(f"wrote {TABLE_PATH} ({os.path.getsize(TABLE_PATH)} bytes)")


if __name__ == "__main__":
    main()
