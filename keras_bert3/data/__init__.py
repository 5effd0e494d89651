"""The pretraining data pipeline: raw text to the batches `BertPretrainer.fit` takes, in four stages of one
module each: read (`corpus_reader`: byte ranges of about equal size, read into windows of documents), group
(`document_groups`), pair (`paired_examples`, `DocumentGroupPairer`) and mask (`masked_batches`, `MlmMasker`,
afresh every pass), then, if asked, packed into long rows (`pair_packing`). Every random draw is seeded by its
pass and place (`pipeline_seeds`), so the same seed gives the same pairs whichever way the data goes.

The entry points differ only where the stream ends: `pretraining_dataset` (to `fit`, or through `tf.data`
service workers); `prepare_pretraining_data` (TFRecord shards of pairs, by local processes, `shard_worker`, or
Apache Beam, `beam_shards`) read with fresh masks by `read_paired_shards`; `write_pretraining_shards` and
`read_pretraining_shards` (the original's static masks). They take three frozen configs (`PairingConfig`,
`MaskingConfig`, `BatchingConfig`; `setting_fields`) and end in `training_batches`; the keywords taken before
the configs still work for one release, with a `DeprecationWarning` (`old_keywords`).
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
