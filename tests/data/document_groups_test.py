"""Grouping and its seeds: every document once per pass, shuffled anew each
pass and the same for the same seed; and the same pairs whether one reader
or two workers read a pass (shards: tests/data/paired_shards_test.py)."""

import os

import numpy as np
import pytest
import tensorflow as tf

from keras_bert3.data import BatchingConfig
from keras_bert3.data import MaskingConfig
from keras_bert3.data import PairingConfig
from keras_bert3.data.corpus_reader import corpus_ranges
from keras_bert3.data.document_groups import corpus_groups
from keras_bert3.data.pretraining_dataset import pretraining_dataset
from keras_bert3_demo import default_corpus_documents
from tests.data.conftest import write_corpus_parts

pytestmark = pytest.mark.backend_free  # The pipeline is TensorFlow under either backend: one pass.


def decoded(groups):
    return [
        [[s.decode() for s in document] for document in group.tolist()] for _, _, group, _ in groups.as_numpy_iterator()
    ]


@pytest.mark.slow
def test_groups_hold_every_document_once_per_pass(tmp_path):
    documents = default_corpus_documents()[:300]
    path = tmp_path / "corpus.txt"
    path.write_text("\n\n".join("\n".join(d) for d in documents) + "\n")
    groups = corpus_groups(corpus_ranges([str(path)], 3), 64, seed=4)
    first, second = decoded(groups), decoded(groups)
    sizes = [len(g) for g in first]
    assert min(sizes) >= 1 and max(sizes) <= 64 and sum(sizes) == 300
    for one_pass in (first, second):
        assert sorted(map(tuple, (d for g in one_pass for d in g))) == sorted(map(tuple, documents))
    assert first != second  # Each pass shuffles anew...
    assert (
        decoded(corpus_groups(corpus_ranges([str(path)], 3), 64, seed=4)) == first
    )  # ...deterministically for the seed.
    assert np.mean([d in documents[:150] for d in first[0]]) < 0.9  # Shuffled, not in file order.


def pairs_of(dataset) -> list:
    """The (token ids, segment ids, NSP label) of every example with its masks
    undone (the original id put back at each masked position), sorted."""
    rows = []
    for x, y, weights in dataset.as_numpy_iterator():
        token_ids = x["token_ids"].copy()
        for row, (positions, ids, weight) in enumerate(zip(x["mask_positions"], y["mlm"], weights["mlm"])):
            token_ids[row, positions[weight > 0]] = ids[weight > 0]
        for ids, segment_ids, length, label in zip(token_ids, x["segment_ids"], x["padding_mask"].sum(1), y["nsp"]):
            rows.append((tuple(ids[:length].tolist()), tuple(segment_ids[:length].tolist()), int(label)))
    return sorted(rows)


@pytest.mark.slow
def test_workers_shares_of_a_pass_hold_its_pairs(tmp_path, tokenizer):
    """A streaming pass read by one reader and read in two workers' shares
    (over the same four ranges) holds the same pairs, masks aside."""
    files = write_corpus_parts(tmp_path, 2)
    size = sum(os.path.getsize(tmp_path / f"part{k}.txt") for k in range(2))
    configs = PairingConfig(sequence_length=64), MaskingConfig(max_predictions_per_seq=8), BatchingConfig(batch_size=64)
    options = dict(seed=5, range_bytes=size // 4 + 1)
    stream = pairs_of(pretraining_dataset(files, tokenizer, *configs, **options))
    shares = []
    for index in range(2):
        context = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=index, num_replicas_in_sync=2)
        shares += pairs_of(pretraining_dataset(files, tokenizer, *configs, input_context=context, **options))
    assert sorted(shares) == stream and len(stream) > 1000
