"""Real text for tokenizer parity tests: >= 10,000 lines in many scripts.

English prose from Python's own documentation (`pydoc_data.topics`), every line
of the multilingual `chatterbot_corpus` dialogs, plus real lines with control
and invisible characters inserted and very long words built from real words.
"""

import functools
import glob
import os
import random

# Characters that Hugging Face removes or turns into spaces, inserted into real lines.
INSERTED_CHARACTERS = ["\x00", "\x0b", "\t", "\u200b", "\xa0", "\x1c", "\x85", "\u2028", "\ufeff", "\r\n"]


def _python_doc_lines() -> list[str]:
    import pydoc_data.topics

    return [line.strip() for text in pydoc_data.topics.topics.values() for line in text.splitlines() if line.strip()]


def _chatterbot_lines() -> list[str]:
    import chatterbot_corpus
    import yaml

    root = os.path.join(os.path.dirname(chatterbot_corpus.__file__), "data")
    lines = []
    for path in sorted(glob.glob(os.path.join(root, "*", "*.yml"))):
        with open(path, encoding="utf-8") as f:
            data = yaml.safe_load(f) or {}
        for conversation in data.get("conversations") or []:
            for text in conversation:
                lines.extend(line for line in str(text).splitlines() if line.strip())
    return lines


def _with_inserted_characters(lines: list[str], rng: random.Random) -> list[str]:
    out = []
    for i, line in enumerate(rng.sample(lines, 400)):
        chars = INSERTED_CHARACTERS[i % len(INSERTED_CHARACTERS)] + rng.choice(INSERTED_CHARACTERS)
        for ch in chars:
            pos = rng.randrange(len(line) + 1)
            line = line[:pos] + ch + line[pos:]
        out.append(line)
    return out


def _long_words(lines: list[str]) -> list[str]:
    """Lines with words around the 100-character limit, glued from real words."""
    out = []
    for script in ("\u0400", "\u0900", "\u0e00", "a"):  # Cyrillic, Devanagari, Thai, Latin.
        source = [l for l in lines if any(script <= ch < chr(ord(script) + 0x80) for ch in l)]
        glued = "".join("".join(ch for ch in l if ch.isalpha()) for l in source[:40])
        for length in (34, 35, 60, 99, 100, 101, 102, 150, 400):
            word = glued[:length]
            out.append(f"{word}")
            out.append(f"{source[0]} {word.capitalize()} {source[1]}")
    return out


@functools.lru_cache(maxsize=None)
def real_lines() -> tuple[str, ...]:
    """All real test lines (deduplicated, in a fixed order)."""
    base = list(dict.fromkeys(_python_doc_lines() + _chatterbot_lines()))
    rng = random.Random(1234)
    lines = base + _with_inserted_characters(base, rng) + _long_words(base)
    return tuple(dict.fromkeys(lines))


@functools.lru_cache(maxsize=None)
def real_pairs(count: int = 3000) -> tuple[tuple[str, str], ...]:
    """Pairs of real lines (consecutive lines, so often question and answer)."""
    lines = real_lines()
    rng = random.Random(99)
    starts = rng.sample(range(len(lines) - 1), count)
    return tuple((lines[i], lines[i + 1]) for i in starts)
