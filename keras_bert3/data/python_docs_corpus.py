"""The embedded default corpus: Python's reference documentation, which every
Python installation ships (`pydoc_data.topics`), as real English documents.
No download is needed."""

import re

from pydoc_data import topics

# Sentence ends: ., ! or ? followed by whitespace and an upper-case letter or quote.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'“(A-Z])")


def python_docs_documents() -> list[list[str]]:
    """Returns the documents of Python's reference docs, one per topic, each a
    list of sentences (whitespace collapsed; code lines kept as sentences).

    Example:
    >>> documents = python_docs_documents()
    >>> len(documents), documents[0][0][:40]
    """
    documents = []
    for name in sorted(topics.topics):
        sentences = []
        for paragraph in re.split(r"\n\s*\n", topics.topics[name]):
            paragraph = re.sub(r"\s+", " ", paragraph).strip()
            if paragraph:
                sentences.extend(s for s in _SENTENCE_END.split(paragraph) if s)
        if sentences:
            documents.append(sentences)
    return documents
