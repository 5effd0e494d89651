"""The pretraining data pipeline: documents, sentence pairs, masking, shards
(the embedded corpora and demo sets are in `keras_bert3.corpora`)."""

from keras_bert3.data.data_counters import DataCounters
from keras_bert3.data.document_dataset import document_dataset
from keras_bert3.data.document_dataset import document_groups
from keras_bert3.data.document_group_pairer import DocumentGroupPairer
from keras_bert3.data.mlm_masker import MlmMasker
from keras_bert3.data.paired_shards import prepare_pretraining_data
from keras_bert3.data.paired_shards import read_paired_shards
from keras_bert3.data.pretraining_dataset import pretraining_dataset
from keras_bert3.data.pretraining_shards import read_pretraining_shards
from keras_bert3.data.pretraining_shards import write_pretraining_shards
from keras_bert3.data.sentence_pairer import SentencePairer
from keras_bert3.data.sentence_splitter import split_sentences

__all__ = [
    "DataCounters",
    "DocumentGroupPairer",
    "MlmMasker",
    "SentencePairer",
    "document_dataset",
    "document_groups",
    "prepare_pretraining_data",
    "pretraining_dataset",
    "read_paired_shards",
    "read_pretraining_shards",
    "split_sentences",
    "write_pretraining_shards",
]
