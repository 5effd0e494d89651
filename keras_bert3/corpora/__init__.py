"""The embedded corpora and labelled demo sets: real text that needs no download
(Python's standard-library documentation and docstrings), for the main job,
the examples and the tests."""

from keras_bert3.corpora.default_corpus import default_corpus_documents
from keras_bert3.corpora.default_corpus import default_corpus_path
from keras_bert3.corpora.default_corpus import stdlib_docstring_documents
from keras_bert3.corpora.docstring_code_tags import docstring_code_tags
from keras_bert3.corpora.docstring_questions import docstring_questions
from keras_bert3.corpora.docstring_topics import docstring_topics
from keras_bert3.corpora.python_docs_corpus import python_docs_documents

__all__ = [
    "default_corpus_documents",
    "default_corpus_path",
    "docstring_code_tags",
    "docstring_questions",
    "docstring_topics",
    "python_docs_documents",
    "stdlib_docstring_documents",
]
