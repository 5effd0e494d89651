"""The pipeline on a corpus as big and messy as users bring: the docstrings of
every installed package (over 20 MB, over 20,000 documents, most of them a
sentence or two), derived on this machine."""

import os

import pytest

from keras_bert3.data import DataCounters
from keras_bert3.data import pretraining_dataset
from keras_bert3.data.paired_shards import prepare_pretraining_data
from keras_bert3.data.paired_shards import read_paired_shards
from keras_bert3_demo.site_packages_corpus import site_packages_corpus_path
from tests.data.bert_statistics import assert_bert_statistics
from tests.data.one_batch_then_exit import seconds_to_read_one_batch_and_exit
from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.masking_config import MaskingConfig

pytestmark = pytest.mark.backend_free  # The pipeline is TensorFlow under either backend: one pass.


@pytest.fixture(scope="module")
def large_corpus():
    path = site_packages_corpus_path()
    with open(path, encoding="utf-8") as f:
        documents = f.read().count("\n\n")
    assert os.path.getsize(path) > 20_000_000 and documents > 20_000, (os.path.getsize(path), documents)
    return path


@pytest.fixture(scope="module")
def prepared(large_corpus, tokenizer, tmp_path_factory):
    """The large corpus paired into shards by `prepare_pretraining_data`."""
    directory = str(tmp_path_factory.mktemp("prepared"))
    prepare_pretraining_data(large_corpus, tokenizer, directory, workers=1, seed=3, verbose=False)
    return directory


@pytest.mark.slow
@pytest.mark.parametrize("path", ["streaming", "shards"])
def test_reading_one_batch_then_exiting_ends(request, large_corpus, minilm_dir, path):
    data = large_corpus if path == "streaming" else request.getfixturevalue("prepared")
    assert seconds_to_read_one_batch_and_exit(data, minilm_dir) < 30


@pytest.mark.slow
@pytest.mark.parametrize("path", ["streaming", "shards"])
def test_statistics_on_the_large_corpus(request, large_corpus, tokenizer, path):
    counters = DataCounters()
    if path == "streaming":
        dataset = pretraining_dataset(
            large_corpus,
            tokenizer,
            masking=MaskingConfig(max_predictions_per_seq=40),
            batching=BatchingConfig(batch_size=256),
            seed=11,
            counters=counters,
        )
    else:
        dataset = read_paired_shards(
            request.getfixturevalue("prepared"),
            tokenizer,
            MaskingConfig(max_predictions_per_seq=40),
            BatchingConfig(batch_size=256),
            seed=11,
        )
    # Half true continuations although most chunks here are a single sentence
    # (always random next), which the original would leave at about 38%.
    assert_bert_statistics(dataset.take(48), tokenizer, min_examples=12_000)
    if path == "streaming":
        assert counters.single_sentence_documents > 0.3 * counters.documents
