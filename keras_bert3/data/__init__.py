"""Text corpora and pretraining data."""

from keras_bert3.data.python_docs_corpus import python_docs_documents

__all__ = ["python_docs_documents"]
