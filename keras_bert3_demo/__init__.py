"""Demo data, not library code: corpora and labelled sets derived from this
machine's Python (the standard library's documentation and docstrings, the
installed packages' docstrings), real text that needs no download.

`keras-bert3 pipeline` (the main job) pretrains on `default_corpus_path()`
and fine-tunes on `docstring_topics()`; the examples and the tests read the
others. `keras_bert3` never imports this package: the demo commands are
added to `keras-bert3` through an entry point (`demo_commands.add_commands`)."""

from keras_bert3_demo.default_corpus import default_corpus_documents
from keras_bert3_demo.default_corpus import default_corpus_path
from keras_bert3_demo.default_corpus import stdlib_docstring_documents
from keras_bert3_demo.docstring_code_tags import docstring_code_tags
from keras_bert3_demo.docstring_questions import docstring_questions
from keras_bert3_demo.docstring_topics import docstring_topics
from keras_bert3_demo.python_docs_corpus import python_docs_documents

__all__ = [
    "default_corpus_documents",
    "default_corpus_path",
    "docstring_code_tags",
    "docstring_questions",
    "docstring_topics",
    "python_docs_documents",
    "stdlib_docstring_documents",
]
