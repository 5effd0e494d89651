"""The data entry points' keywords of 2026-11-26 still work for a release:
the same batches and shards as the configs give, with a `DeprecationWarning`
that names the new form (`keras_bert3/data/old_keywords.py`)."""

import re
from pathlib import Path

import numpy as np
import pytest

from keras_bert3.data import BatchingConfig
from keras_bert3.data import MaskingConfig
from keras_bert3.data import PairingConfig
from keras_bert3.data import prepare_pretraining_data
from keras_bert3.data import pretraining_dataset
from keras_bert3.data import read_paired_shards
from keras_bert3.data import write_pretraining_shards
from keras_bert3_demo import default_corpus_documents
from tests.data.conftest import collect

pytestmark = pytest.mark.backend_free  # The tf.data pipeline alone.

PAIRING = PairingConfig(sequence_length=64, short_seq_prob=0.2, balanced_nsp=False, pairing_group=8)
MASKING = MaskingConfig(max_predictions_per_seq=8, masked_lm_prob=0.2, whole_word_masking=True)
BATCHING = BatchingConfig(batch_size=16, drop_remainder=True, shuffle_buffer=64)
OLD_KEYWORDS = {  # The same settings as the 2026-11-26 keywords.
    "sequence_length": 64,
    "short_seq_prob": 0.2,
    "balanced_nsp": False,
    "pairing_group": 8,
    "max_predictions_per_seq": 8,
    "masked_lm_prob": 0.2,
    "whole_word_masking": True,
    "batch_size": 16,
    "drop_remainder": True,
    "example_buffer": 64,
}
PAIRING_KEYWORDS = ("sequence_length", "short_seq_prob", "balanced_nsp", "pairing_group")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> str:
    """20 documents of the embedded corpus, one sentence a line."""
    path = tmp_path_factory.mktemp("old_keywords") / "corpus.txt"
    path.write_text("\n\n".join("\n".join(document) for document in default_corpus_documents()[:20]) + "\n")
    return str(path)


def assert_same(ours: dict, theirs: dict) -> None:
    assert sorted(ours) == sorted(theirs)
    for key in ours:
        np.testing.assert_array_equal(ours[key], theirs[key], err_msg=key)


@pytest.mark.slow
def test_old_keywords_and_positions_give_the_configs_batches(corpus, tokenizer):
    expected = collect(pretraining_dataset(corpus, tokenizer, PAIRING, MASKING, BATCHING, seed=3))
    with pytest.warns(DeprecationWarning) as warned:
        by_keywords = collect(pretraining_dataset(corpus, tokenizer, seed=3, **OLD_KEYWORDS))
    message = str(warned[0].message)
    assert message.startswith("pretraining_dataset(sequence_length=64, short_seq_prob=0.2,")
    assert "pass pairing=PairingConfig(sequence_length=64, short_seq_prob=0.2, balanced_nsp=False" in message
    assert "batching=BatchingConfig(batch_size=16, drop_remainder=True, shuffle_buffer=64)" in message
    assert_same(by_keywords, expected)
    others = {key: value for key, value in OLD_KEYWORDS.items() if key not in ("sequence_length", "batch_size")}
    others.pop("max_predictions_per_seq")
    with pytest.warns(DeprecationWarning, match=re.escape("pretraining_dataset(short_seq_prob=0.2")):
        by_positions = collect(pretraining_dataset(corpus, tokenizer, 64, 8, 16, 3, **others))
    assert_same(by_positions, expected)


@pytest.mark.slow
def test_old_keywords_prepare_and_read_the_same_shards(corpus, tokenizer, tmp_path):
    prepare_pretraining_data(corpus, tokenizer, str(tmp_path / "new"), PAIRING, seed=3, num_shards=2, workers=1)
    old = {key: OLD_KEYWORDS[key] for key in PAIRING_KEYWORDS}
    with pytest.warns(DeprecationWarning, match=re.escape("pass pairing=PairingConfig(sequence_length=64,")):
        prepare_pretraining_data(corpus, tokenizer, str(tmp_path / "old"), seed=3, num_shards=2, workers=1, **old)
    for shard in sorted((tmp_path / "new").glob("*.tfrecord")):
        assert (tmp_path / "old" / shard.name).read_bytes() == shard.read_bytes()
    expected = collect(read_paired_shards(str(tmp_path / "new"), tokenizer, MASKING, BATCHING, seed=5))
    with pytest.warns(
        DeprecationWarning, match=re.escape("read_paired_shards(sequence_length=64, max_predictions_per_seq=8")
    ):
        by_keywords = read_paired_shards(
            str(tmp_path / "new"),
            tokenizer,
            seed=5,
            **{key: OLD_KEYWORDS[key] for key in OLD_KEYWORDS if key not in PAIRING_KEYWORDS[1:]},
        )
    assert_same(collect(by_keywords), expected)
    with pytest.raises(ValueError, match="hold pairs of length 64, the run asks for 128"):
        read_paired_shards(str(tmp_path / "new"), tokenizer, sequence_length=128)


@pytest.mark.slow
def test_old_keywords_write_the_same_static_shards(corpus, tokenizer, tmp_path):
    def shards(directory: Path, *args, **kwargs) -> list[bytes]:
        paths = write_pretraining_shards(
            corpus, tokenizer, str(directory), *args, dupe_factor=1, num_shards=1, seed=3, verbose=False, **kwargs
        )
        return [Path(path).read_bytes() for path in paths]

    expected = shards(tmp_path / "new", PAIRING, MASKING)
    old = {key: value for key, value in OLD_KEYWORDS.items() if key not in ("batch_size", "drop_remainder")}
    old.pop("example_buffer")
    with pytest.warns(DeprecationWarning, match=re.escape("write_pretraining_shards(sequence_length=64")):
        assert shards(tmp_path / "old", **old) == expected


def test_an_old_keyword_the_function_never_took_is_refused(corpus, tokenizer, tmp_path):
    with pytest.raises(
        TypeError, match="prepare_pretraining_data\\(\\) takes no 'batch_size': it has no BatchingConfig"
    ):
        prepare_pretraining_data(corpus, tokenizer, str(tmp_path), batch_size=16)
    with pytest.raises(TypeError, match="unexpected keyword argument 'batch_sizes'"):
        pretraining_dataset(corpus, tokenizer, batch_sizes=16)
