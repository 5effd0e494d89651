"""The data pipeline's settings: frozen `PairingConfig`, `MaskingConfig` and
`BatchingConfig` that refuse bad values naming their flags; `prepared.json`
written from `PairingConfig`'s fields and read back into it, an older or
foreign one refused with what to do."""

import dataclasses
import json

import pytest

from keras_bert3.data import BatchingConfig
from keras_bert3.data import MaskingConfig
from keras_bert3.data import PairingConfig
from keras_bert3.data.paired_shards import INFO_FILE
from keras_bert3.data.paired_shards import pairing_of
from keras_bert3.data.paired_shards import read_prepared_info

pytestmark = pytest.mark.backend_free  # No model: TensorFlow's file functions under either backend.

# A prepared.json as the code before the configs wrote it (format 2): still read.
OLD_INFO = {
    "format": "keras_bert3 paired shards 2",
    "tokenizer": "0123456789abcdef",
    "vocabulary_size": 100,
    "lowercase": True,
    "sequence_length": 64,
    "next_sentence_prediction": True,
    "num_shards": 1,
    "seed": 3,
    "short_seq_prob": 0.1,
    "balanced_nsp": False,
    "pairing_group": 256,
    "file_format": "sentences",
    "corpus": [["corpus.txt", 1000]],
}


def test_configs_are_frozen_and_refuse_bad_values_by_flag():
    pairing = PairingConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        pairing.sequence_length = 64
    pairing.validate()
    MaskingConfig().validate(pairing)
    BatchingConfig().validate(pairing)
    with pytest.raises(
        ValueError, match=r"--sequence-length 4 must be at least 5.*--pairing-group 1 must be at least 2"
    ):
        PairingConfig(sequence_length=4, pairing_group=1).validate()
    with pytest.raises(ValueError, match="--max-predictions-per-seq 40 is larger than the sequence"):
        MaskingConfig(max_predictions_per_seq=40).validate(PairingConfig(sequence_length=32))
    with pytest.raises(ValueError, match=r"--masked-lm-prob 0 must be in \(0, 1\]"):
        MaskingConfig(masked_lm_prob=0).validate()
    with pytest.raises(ValueError, match="--packed-length 64 must be at least --sequence-length 128"):
        BatchingConfig(packed_length=64).validate(PairingConfig())


def test_prepared_json_is_the_pairing_fields_and_an_old_one_is_still_read(tmp_path):
    pairing = PairingConfig(sequence_length=64, balanced_nsp=False)
    assert pairing_of(OLD_INFO) == pairing
    assert set(dataclasses.asdict(pairing)) < set(OLD_INFO)  # Every field recorded, under its own name.
    (tmp_path / INFO_FILE).write_text(json.dumps(OLD_INFO))
    (tmp_path / "paired-00000-of-00001.tfrecord").write_bytes(b"")
    assert pairing_of(read_prepared_info(str(tmp_path))) == pairing


def test_a_prepared_json_of_another_format_or_lacking_a_setting_is_refused(tmp_path):
    (tmp_path / "paired-00000-of-00001.tfrecord").write_bytes(b"")
    (tmp_path / INFO_FILE).write_text(json.dumps({**OLD_INFO, "format": "keras_bert3 paired shards 1"}))
    with pytest.raises(ValueError, match="format 'keras_bert3 paired shards 1'.*prepare the data again"):
        read_prepared_info(str(tmp_path))
    (tmp_path / INFO_FILE).write_text(json.dumps({k: v for k, v in OLD_INFO.items() if k != "pairing_group"}))
    with pytest.raises(ValueError, match="has no pairing_group: it was written by another version"):
        read_prepared_info(str(tmp_path))
