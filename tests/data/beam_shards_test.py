"""Shards built by the Apache Beam pipeline on the DirectRunner in two
processes: byte for byte those of `prepare_pretraining_data`, with BERT's
statistics, on a real corpus of tens of thousands of short documents."""

import filecmp
import os

import pytest

from keras_bert3.data.paired_shards import prepare_pretraining_data
from keras_bert3.data.paired_shards import read_paired_shards
from keras_bert3_demo.site_packages_corpus import site_packages_corpus_path
from tests.data.bert_statistics import assert_bert_statistics
from tests.reference import import_reference
from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.masking_config import MaskingConfig

pytestmark = pytest.mark.backend_free  # The pipeline is TensorFlow under either backend: one pass.


def corpus_head(tmp_path_factory, characters: int) -> str:
    """The first `characters` of the large docstring corpus, cut at a document boundary."""
    with open(site_packages_corpus_path(), encoding="utf-8") as f:
        text = f.read(characters)
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text(text[: text.rindex("\n\n")] + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return corpus_head(tmp_path_factory, 4_000_000)  # Enough examples for the statistics.


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory):
    return corpus_head(tmp_path_factory, 1_000_000)


@pytest.mark.slow
def test_beam_shards_equal_local_shards_and_keep_the_statistics(tmp_path, corpus, tokenizer, capfd):
    import_reference("apache_beam")
    from keras_bert3.data.beam_shards import prepare_pretraining_data_beam

    settings = dict(num_shards=4, seed=7, verbose=False)
    capfd.readouterr()
    beam_paths = prepare_pretraining_data_beam(corpus, tokenizer, str(tmp_path / "beam"), workers=2, **settings)
    # The two worker processes write to this process's stderr: their harness logs errors only by default.
    assert "INFO:apache_beam.runners.worker" not in capfd.readouterr().err
    local_paths = prepare_pretraining_data(corpus, tokenizer, str(tmp_path / "local"), workers=1, **settings)
    assert [os.path.basename(p) for p in beam_paths] == [os.path.basename(p) for p in local_paths]
    for beam_path, local_path in zip(beam_paths, local_paths):
        assert filecmp.cmp(beam_path, local_path, shallow=False), beam_path
    assert filecmp.cmp(tmp_path / "beam" / "prepared.json", tmp_path / "local" / "prepared.json", shallow=False)
    assert not [name for name in os.listdir(tmp_path / "beam") if ".partial" in name]

    dataset = read_paired_shards(
        str(tmp_path / "beam"), tokenizer, MaskingConfig(max_predictions_per_seq=40), BatchingConfig(batch_size=256)
    )
    assert_bert_statistics(dataset, tokenizer, min_examples=10_000)


def test_a_rerun_builds_only_the_missing_shards(tmp_path, small_corpus, tokenizer):
    """A pipeline that stopped with shards missing (and a half-written file
    left): run again, only the missing shard is built, bytes as before."""
    import_reference("apache_beam")
    from keras_bert3.data.beam_shards import prepare_pretraining_data_beam

    settings = dict(num_shards=3, seed=1, verbose=False, beam_options=["--runner=DirectRunner"])
    paths = prepare_pretraining_data_beam(small_corpus, tokenizer, str(tmp_path), **settings)
    kept = {path: os.path.getmtime(path) for path in paths[:2]}
    whole = open(paths[2], "rb").read()
    os.remove(paths[2])
    open(paths[2] + ".partial-killed", "wb").write(whole[: len(whole) // 2])
    prepare_pretraining_data_beam(small_corpus, tokenizer, str(tmp_path), **settings)
    assert open(paths[2], "rb").read() == whole
    assert {path: os.path.getmtime(path) for path in paths[:2]} == kept
    assert not [name for name in os.listdir(tmp_path) if ".partial" in name]
