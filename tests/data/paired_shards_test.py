"""`prepare-data`: shards that are the same whatever the number of worker processes, finished by
rerunning after a SIGKILL, refused when they do not match the run; read with
fresh masks every pass."""

import os
import signal
import subprocess
import sys

import numpy as np
import pytest

import tensorflow as tf

from keras_bert3.data.paired_shards import prepare_pretraining_data
from keras_bert3.data.paired_shards import read_paired_shards
from keras_bert3.data.pretraining_dataset import pretraining_dataset
from keras_bert3.tokenizers import BertTokenizer
from tests.data.conftest import collect
from tests.data.conftest import write_corpus_parts
from tests.data.corpus_reader_test import MESSY
from tests.data.document_groups_test import pairs_of
from tests.named_moment import SHARD_RENAME
from tests.named_moment import moment_environment
from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.pairing_config import PairingConfig

pytestmark = pytest.mark.backend_free  # The pipeline is TensorFlow under either backend: one pass.

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The embedded corpus in three files of the original format, one of them messy."""
    directory = tmp_path_factory.mktemp("corpus")
    write_corpus_parts(directory, 2)
    (directory / "part2.txt").write_text(MESSY * 20, encoding="utf-8")
    return directory


def shard_bytes(directory):
    return {
        name: open(os.path.join(directory, name), "rb").read()
        for name in sorted(os.listdir(directory))
        if name.endswith(".tfrecord")
    }


@pytest.mark.slow
def test_shards_are_the_same_with_two_workers_and_read_with_new_masks(tmp_path, corpus, tokenizer):
    one, two = str(tmp_path / "one"), str(tmp_path / "two")
    prepare_pretraining_data(str(corpus / "*.txt"), tokenizer, one, num_shards=8, workers=1, verbose=False)
    prepare_pretraining_data(str(corpus / "*.txt"), tokenizer, two, num_shards=8, workers=2, verbose=False)
    assert shard_bytes(one) == shard_bytes(two) and len(shard_bytes(one)) == 8
    dataset = read_paired_shards(one, tokenizer, batching=BatchingConfig(batch_size=64))
    first, second = collect(dataset), collect(dataset)
    assert len(first["token_ids"]) == len(second["token_ids"]) > 1000
    assert not np.array_equal(first["mask_positions"], second["mask_positions"])  # Dynamic masking.
    assert abs(np.mean(first["y_nsp"] == 0) - 0.5) < 0.03
    # The shards hold the pairs of a stream's first pass over the same eight ranges, whatever
    # TensorFlow's global seed (it orders the stream's shuffles, not its pairs); its second pass differs.
    size = sum(os.path.getsize(path) for path in corpus.glob("*.txt"))
    tf.random.set_seed(1234)
    try:
        stream = pretraining_dataset(
            str(corpus / "*.txt"), tokenizer, batching=BatchingConfig(batch_size=64), range_bytes=-(-size // 8)
        )
        first_pass, second_pass = pairs_of(stream), pairs_of(stream)
    finally:
        tf.random.set_seed(None)
    assert first_pass == pairs_of(dataset) and len(first_pass) > 1000
    assert second_pass != first_pass


@pytest.mark.slow
def test_a_killed_prepare_data_finishes_when_rerun(tmp_path, corpus, minilm_dir, tokenizer):
    """Half the embedded corpus (one file) in 64 shards: killed after the third, rerun, the same shards."""
    files = str(corpus / "part0.txt")
    command = [
        sys.executable,
        "-m",
        "keras_bert3",
        "prepare-data",
        "--corpus",
        files,
        "--preset",
        minilm_dir,
        "--num-shards",
        "64",
        "--workers",
        "1",
    ]
    complete = str(tmp_path / "complete")
    prepare_pretraining_data(files, tokenizer, complete, num_shards=64, workers=1, verbose=False)
    killed = str(tmp_path / "killed")
    # SIGKILL right after the fourth rename: prepared.json's, then three shards'.
    environment = moment_environment(SHARD_RENAME, 4, "kill")
    died = subprocess.run(command + ["--output", killed], cwd=REPO, env=environment, capture_output=True)
    assert died.returncode == -signal.SIGKILL, died.stderr.decode()[-3000:]
    left = shard_bytes(killed)
    assert len(left) == 3, len(left)
    with pytest.raises(ValueError, match=f"holds {len(left)} of 64 shards"):
        read_paired_shards(killed, tokenizer)
    with open(os.path.join(killed, "paired-00063-of-00064.tfrecord.partial"), "wb") as f:
        f.write(b"half a record")  # As a kill in the middle of a shard leaves.
    subprocess.run(command + ["--output", killed], check=True, cwd=REPO, capture_output=True)
    assert shard_bytes(killed) == shard_bytes(complete)
    assert not [name for name in os.listdir(killed) if name.endswith(".partial")]


def test_shards_of_another_tokenizer_length_or_settings_are_refused(tmp_path, corpus, tokenizer):
    directory = str(tmp_path / "prepared")
    prepare_pretraining_data(
        str(corpus / "part2.txt"), tokenizer, directory, PairingConfig(sequence_length=64), num_shards=2, verbose=False
    )
    other = BertTokenizer(tokenizer.get_vocabulary(), lowercase=False)
    with pytest.raises(
        ValueError, match="written with another tokenizer .*lowercase=True.* than this run's .*lowercase=False"
    ):
        read_paired_shards(directory, other)
    with pytest.raises(ValueError, match="hold pairs of length 64, the run asks for 128"):
        read_paired_shards(directory, tokenizer, pairing=PairingConfig(sequence_length=128))
    with pytest.raises(ValueError, match="prepared with next sentence prediction"):
        read_paired_shards(
            directory, tokenizer, pairing=PairingConfig(sequence_length=64, next_sentence_prediction=False)
        )
    with pytest.raises(ValueError, match="holds shards prepared with other settings .*sequence_length: 64 -> 128"):
        prepare_pretraining_data(str(corpus / "part2.txt"), tokenizer, directory, num_shards=2, verbose=False)
    with pytest.raises(ValueError, match="holds no prepared shards"):
        read_paired_shards(str(tmp_path), tokenizer)
