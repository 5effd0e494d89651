"""Python's reference documentation (`pydoc_data.topics`, shipped with every
Python installation) as real English documents. No download is needed."""

from pydoc_data import topics

from keras_bert3.data.sentence_splitter import split_sentences


def python_docs_documents() -> list[list[str]]:
    """Returns the documents of Python's reference docs, one per topic, each a
    list of sentences (whitespace collapsed; code lines kept as sentences).

    Example:
    >>> documents = python_docs_documents()
    >>> len(documents), documents[0][0][:40]
    """
    documents = []
    for name in sorted(topics.topics):
        sentences = split_sentences(topics.topics[name])
        if sentences:
            documents.append(sentences)
    return documents
