"""The pretraining data pipeline: raw text to the batches `BertPretrainer.fit`
takes, in four stages, each one module:

1. read (`corpus_reader`): the corpus cut into byte ranges of about equal
   size (`corpus_ranges`), each range read into windows of documents with
   TensorFlow ops (`range_reader`);
2. group (`document_groups`): each window shuffled and dealt into groups of
   documents (`corpus_groups`);
3. pair (`paired_examples`, `document_group_pairer`): each group tokenized
   and cut into NSP pairs (`DocumentGroupPairer`);
4. mask (`masked_batches`, `mlm_masker`): batches of pairs masked 80/10/10
   afresh on every pass (`MlmMasker`); then, if asked (`packed_length`),
   packed whole into long rows (`pair_packing`).

Every random draw is seeded by its pass and place (range, window, group;
batch) from one scheme (`pipeline_seeds`), so the same seed gives the same
pairs whichever way the data goes. The entry points compose the same stages
and differ only where the stream ends:

- `pretraining_dataset`: streamed to `fit` (each worker reads its share of the
  ranges), or by `tf.data` service workers (`distribution.data_service_client`);
- `prepare_pretraining_data` (`paired_shards`, `shard_worker`): pairs written to
  TFRecord shards, one range a shard, by local processes, or by Apache Beam
  (`beam_shards`), then read with fresh masks by `read_paired_shards`;
- `write_pretraining_shards` (`pretraining_shards`): masked examples in the
  original's static-mask format, read back by `read_pretraining_shards`.

The settings are three frozen dataclasses, each field with its default, its
flag's help and its check (`setting_fields`): `PairingConfig` (the pairs,
recorded in the shards' `prepared.json`), `MaskingConfig` (the masks) and
`BatchingConfig` (the batches); the entry points take them and end in one
function, `training_batches` (shuffle -> batch -> masks -> rows).
The keywords the entry points took before the configs (`sequence_length=`,
`batch_size=`, ...) still work for one release, with a `DeprecationWarning`
(`old_keywords`).

`document_dataset` reads documents alone (e.g. to learn a vocabulary);
`DataCounters` counts what the stages read, skipped and made. The demo
corpora are outside the library, in `keras_bert3_demo`.
"""

from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.corpus_reader import document_dataset
from keras_bert3.data.data_counters import DataCounters
from keras_bert3.data.document_group_pairer import DocumentGroupPairer
from keras_bert3.data.masking_config import MaskingConfig
from keras_bert3.data.mlm_masker import MlmMasker
from keras_bert3.data.paired_shards import prepare_pretraining_data
from keras_bert3.data.paired_shards import read_paired_shards
from keras_bert3.data.pairing_config import PairingConfig
from keras_bert3.data.pretraining_dataset import pretraining_dataset
from keras_bert3.data.pretraining_shards import read_pretraining_shards
from keras_bert3.data.pretraining_shards import write_pretraining_shards
from keras_bert3.data.sentence_splitter import split_sentences

__all__ = [
    "BatchingConfig",
    "DataCounters",
    "DocumentGroupPairer",
    "MaskingConfig",
    "MlmMasker",
    "PairingConfig",
    "document_dataset",
    "prepare_pretraining_data",
    "pretraining_dataset",
    "read_paired_shards",
    "read_pretraining_shards",
    "split_sentences",
    "write_pretraining_shards",
]
