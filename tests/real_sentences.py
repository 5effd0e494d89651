"""Real English sentences of different lengths (from Python's own reference
documentation, which ships with every Python), for model parity tests."""

import re

from pydoc_data import topics


def real_sentences(count: int, *, min_words: int = 3, max_words: int = 60) -> list[str]:
    """The first `count` sentences of Python's docs within the word limits,
    with lengths spread out (sorted, then interleaved from both ends)."""
    text = " ".join(topics.topics[key] for key in sorted(topics.topics))
    candidates = []
    for sentence in re.split(r"(?<=[.!?])\s+", re.sub(r"\s+", " ", text)):
        if min_words <= len(sentence.split()) <= max_words and sentence not in candidates:
            candidates.append(sentence)
        if len(candidates) >= 20 * count:
            break
    candidates.sort(key=len)
    step = max(1, len(candidates) // count)
    return candidates[::step][:count]
