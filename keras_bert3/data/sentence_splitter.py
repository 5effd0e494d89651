"""Splits English prose into sentences with one regular expression (no model)."""

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'“(A-Z])")
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_WHITESPACE = re.compile(r"\s+")


def split_sentences(text: str) -> list[str]:
    """Splits prose into sentences: paragraphs at blank lines, whitespace collapsed, then a sentence
    after `.`, `!` or `?` where the next word starts upper-case (or with a quote or "(").

    Example:
    >>> split_sentences("It rains. The sky is grey!\\n\\nA new paragraph (e.g. this) ends.")
    ['It rains.', 'The sky is grey!', 'A new paragraph (e.g. this) ends.']
    """
    sentences = []
    for paragraph in _PARAGRAPH_BREAK.split(text):
        paragraph = _WHITESPACE.sub(" ", paragraph).strip()
        if paragraph:
            sentences.extend(s for s in _SENTENCE_END.split(paragraph) if s)
    return sentences
