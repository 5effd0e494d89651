"""Text corpora and pretraining data."""

from keras_bert3.data.data_counters import DataCounters
from keras_bert3.data.default_corpus import default_corpus_documents
from keras_bert3.data.default_corpus import default_corpus_path
from keras_bert3.data.default_corpus import stdlib_docstring_documents
from keras_bert3.data.document_dataset import document_dataset
from keras_bert3.data.document_dataset import document_groups
from keras_bert3.data.document_group_pairer import DocumentGroupPairer
from keras_bert3.data.docstring_code_tags import docstring_code_tags
from keras_bert3.data.docstring_questions import docstring_questions
from keras_bert3.data.docstring_topics import docstring_topics
from keras_bert3.data.mlm_masker import MlmMasker
from keras_bert3.data.paired_shards import prepare_pretraining_data
from keras_bert3.data.paired_shards import read_paired_shards
from keras_bert3.data.pretraining_dataset import pretraining_dataset
from keras_bert3.data.pretraining_shards import read_pretraining_shards
from keras_bert3.data.pretraining_shards import write_pretraining_shards
from keras_bert3.data.python_docs_corpus import python_docs_documents
from keras_bert3.data.sentence_pairer import SentencePairer
from keras_bert3.data.sentence_splitter import split_sentences

__all__ = [
    "DataCounters",
    "DocumentGroupPairer",
    "MlmMasker",
    "SentencePairer",
    "default_corpus_documents",
    "default_corpus_path",
    "docstring_code_tags",
    "docstring_questions",
    "docstring_topics",
    "document_dataset",
    "document_groups",
    "prepare_pretraining_data",
    "pretraining_dataset",
    "python_docs_documents",
    "read_paired_shards",
    "read_pretraining_shards",
    "split_sentences",
    "stdlib_docstring_documents",
    "write_pretraining_shards",
]
