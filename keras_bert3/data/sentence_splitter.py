"""Splits English prose into sentences with one regular expression (no model)."""

import re

# A sentence ends at ., ! or ? followed by whitespace and an upper-case letter, a quote or "(".
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'“(A-Z])")
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_WHITESPACE = re.compile(r"\s+")


def split_sentences(text: str) -> list[str]:
    """Splits text into sentences: paragraphs at blank lines, whitespace collapsed,
    then sentences after `.`, `!` or `?` when the next word starts upper-case.

    Args:
        text: str. Prose; lines inside a paragraph are joined.

    Returns:
        list of non-empty sentence strings, in order.

    Examples:

    >>> split_sentences("It rains. The sky is grey!\\n\\nA new paragraph (e.g. this) ends.")
    ['It rains.', 'The sky is grey!', 'A new paragraph (e.g. this) ends.']
    """
    sentences = []
    for paragraph in _PARAGRAPH_BREAK.split(text):
        paragraph = _WHITESPACE.sub(" ", paragraph).strip()
        if paragraph:
            sentences.extend(s for s in _SENTENCE_END.split(paragraph) if s)
    return sentences
