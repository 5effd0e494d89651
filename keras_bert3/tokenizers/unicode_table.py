"""Per-code-point table of what Hugging Face's BERT normalizer and pre-tokenizer do.

Both act on one code point at a time, so together they map each code point to a short string (a space separating words):
`KEEP`, `REMOVE`, `SPACE`, `ISOLATE` (a word of its own), or an explicit output. The table is probed from the installed
`tokenizers` (`unicodedata` and ICU disagree with it) by `tools/regenerate_unicode_table.py`.

Known limit: with `strip_accents=True` Hugging Face's whole-string NFD can reorder
adjacent combining spacing marks (Mc); the table keeps input order."""

import dataclasses
import gzip
import json
import os

import numpy as np

KEEP = 0
REMOVE = 1
SPACE = 2
ISOLATE = 3
NUM_RULES = 4

MAX_CODE_POINT = 0x10FFFF
TABLE_PATH = os.path.join(os.path.dirname(__file__), "bert_unicode_table.json.gz")


def table_key(lowercase: bool, strip_accents: bool) -> str:
    return f"lowercase={int(bool(lowercase))},strip_accents={int(bool(strip_accents))}"


@dataclasses.dataclass(frozen=True)
class UnicodeTable:
    """The normalizer table for one (lowercase, strip_accents) combination.

    Code points in `[run_starts[i], run_starts[i + 1])` follow `run_rules[i]` unless listed in the sorted
    `explicit_code_points`, whose `explicit_outputs` rows hold output code points, 32 between words, padded with -1."""

    run_starts: np.ndarray
    run_rules: np.ndarray
    explicit_code_points: np.ndarray
    explicit_outputs: np.ndarray

    @property
    def width(self) -> int:
        """Most output code points of any one input code point (at least 3)."""
        return max(3, self.explicit_outputs.shape[1])

    def output(self, code_point: int) -> str:
        """What the table maps one code point to (pure Python, for tests)."""
        i = np.searchsorted(self.explicit_code_points, code_point)
        if i < len(self.explicit_code_points) and self.explicit_code_points[i] == code_point:
            return "".join(chr(c) for c in self.explicit_outputs[i] if c >= 0)
        rule = self.run_rules[np.searchsorted(self.run_starts, code_point, side="right") - 1]
        return {KEEP: chr(code_point), REMOVE: "", SPACE: " ", ISOLATE: f" {chr(code_point)} "}[int(rule)]


_CACHE = {}


def load_unicode_table(lowercase: bool = True, strip_accents: bool | None = None) -> UnicodeTable:
    """Loads the packaged table for one normalizer configuration (`strip_accents` None: as `lowercase`).

    Examples:
    >>> load_unicode_table(lowercase=False).output(ord("!"))
    ' ! '
    """
    if strip_accents is None:
        strip_accents = lowercase
    key = table_key(lowercase, strip_accents)
    if key not in _CACHE:
        with gzip.open(TABLE_PATH, "rt", encoding="utf-8") as f:
            data = json.load(f)
        entry = data["tables"][key]
        starts = np.cumsum(np.asarray(entry["run_start_deltas"], dtype=np.int64)).astype(np.int32)
        codes = np.cumsum(np.asarray(entry["explicit_deltas"], dtype=np.int64)).astype(np.int32)
        outputs = entry["explicit_outputs"]
        width = max([len(o) for o in outputs] + [1])
        out = np.full((len(outputs), width), -1, dtype=np.int32)
        for i, o in enumerate(outputs):
            out[i, : len(o)] = [ord(ch) for ch in o]
        _CACHE[key] = UnicodeTable(
            run_starts=starts,
            run_rules=np.asarray(entry["run_rules"], dtype=np.int32),
            explicit_code_points=codes,
            explicit_outputs=out,
        )
    return _CACHE[key]
