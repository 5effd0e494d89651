"""`prepare-data`: shards that are the same whatever the number of worker processes, finished by
rerunning after a SIGKILL, refused when they do not match the run; read with
fresh masks every pass."""

import os
import shutil
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
from tests.warm_commands import started_and_waiting
from tests.small_disk import small_disk
from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.pairing_config import PairingConfig
from tests import warm_commands

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


def prepare_command(corpus, minilm_dir, output) -> list[str]:
    """`keras-bert3 prepare-data` of half the embedded corpus (one file) into 64 shards."""
    return [
        sys.executable, "-m", "keras_bert3", "prepare-data", "--corpus", str(corpus / "part0.txt"),
        "--preset", minilm_dir, "--num-shards", "64", "--workers", "1", "--output", str(output),
    ]  # fmt: skip


def said(result) -> list[str]:
    """The command's own line on stderr (one, asserted): TensorFlow's log lines left out."""
    lines = [line for line in result.stderr.splitlines() if line.startswith("keras-bert3 prepare-data: ")]
    assert len(lines) == 1, result.stderr[-3000:]
    return lines


def rerun(corpus, tokenizer, output) -> None:
    """`prepare_command` run again, in this process (the library's call: the command's own lines are tested above)."""
    prepare_pretraining_data(str(corpus / "part0.txt"), tokenizer, str(output), num_shards=64, workers=1, verbose=False)


@pytest.fixture(scope="module")
def complete(tmp_path_factory, corpus, tokenizer):
    """The shards of `prepare_command`, made undisturbed."""
    path = str(tmp_path_factory.mktemp("complete"))
    prepare_pretraining_data(str(corpus / "part0.txt"), tokenizer, path, num_shards=64, workers=1, verbose=False)
    return path


@pytest.mark.slow
def test_a_killed_prepare_data_finishes_when_rerun(tmp_path, corpus, minilm_dir, tokenizer, complete):
    """Killed after the third shard, rerun, the same shards."""
    killed = str(tmp_path / "killed")
    command = prepare_command(corpus, minilm_dir, killed)
    # SIGKILL right after the fourth rename: prepared.json's, then three shards'.
    environment = moment_environment(SHARD_RENAME, 4, "kill")
    died = warm_commands.run(command, cwd=REPO, env=environment, capture_output=True)
    assert died.returncode == -signal.SIGKILL, died.stderr.decode()[-3000:]
    left = shard_bytes(killed)
    assert len(left) == 3, len(left)
    with pytest.raises(ValueError, match=f"holds {len(left)} of 64 shards"):
        read_paired_shards(killed, tokenizer)
    with open(os.path.join(killed, "paired-00063-of-00064.tfrecord.partial"), "wb") as f:
        f.write(b"half a record")  # As a kill in the middle of a shard leaves.
    warm_commands.run(command, check=True, cwd=REPO, capture_output=True)
    assert shard_bytes(killed) == shard_bytes(complete)
    assert not [name for name in os.listdir(killed) if name.endswith(".partial")]


@pytest.mark.slow
def test_a_second_copy_is_refused_and_a_full_disk_is_named(tmp_path, corpus, minilm_dir, tokenizer, complete):
    """A second `prepare-data` on an output in use is refused (one line, exit
    2) and the first goes on; one that finds the disk full says so in one
    line naming the folder (exit 2) and leaves no half-written shard. Rerun
    (with room), each ends with the shards of an undisturbed run."""
    output = tmp_path / "prepared"
    first = started_and_waiting(  # Its first shard written.
        prepare_command(corpus, minilm_dir, output), SHARD_RENAME, 2, cwd=REPO, stderr=subprocess.DEVNULL
    )
    second = warm_commands.run(prepare_command(corpus, minilm_dir, output), cwd=REPO, capture_output=True, text=True)
    assert second.returncode == 2 and "Traceback" not in second.stderr, second.stderr[-3000:]
    assert said(second)[0].startswith(f"keras-bert3 prepare-data: {output} is in use by another run (pid {first.pid}")
    first.send_signal(signal.SIGTERM)
    first.stdout.read()
    assert first.wait(timeout=60) == 128 + signal.SIGTERM  # Its own handler: the workers stopped, exit 143.
    rerun(corpus, tokenizer, output)
    assert shard_bytes(output) == shard_bytes(complete)

    # A disk that holds the tokenizer's files and about half the shards.
    shards = sum(len(data) for data in shard_bytes(complete).values())
    rest = sum(os.path.getsize(os.path.join(complete, n)) for n in os.listdir(complete) if "tfrecord" not in n)
    with small_disk(tmp_path / "disk", (rest + shards / 2) / 2**20 + 0.1) as disk:
        full = disk / "prepared"
        result = warm_commands.run(prepare_command(corpus, minilm_dir, full), cwd=REPO, capture_output=True, text=True)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-3000:]
        lines = said(result)
        assert lines[0].startswith(f"keras-bert3 prepare-data: Cannot write shards into {full}: "), lines
        assert "No space left on device" in lines[0] and "run the same command to go on" in lines[0]
        assert not [name for name in os.listdir(full) if "partial" in name]
        written = len(shard_bytes(full))
        assert 0 < written < 64, written
        shutil.copytree(full, tmp_path / "moved")
    rerun(corpus, tokenizer, tmp_path / "moved")
    assert shard_bytes(tmp_path / "moved") == shard_bytes(complete)


@pytest.mark.slow
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
