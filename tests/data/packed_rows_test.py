"""The `packed_length` option of `pretraining_dataset` and `read_paired_shards`:
batches of packed rows of one fixed shape, holding exactly the pairs and masks
of the unpacked stream (masked `PACKING_WINDOW` pairs a batch) packed in order
by `pack_pairs` (whose rows give the loss of their pairs unpacked:
tests/models/packed_pretraining_test.py)."""

import numpy as np
import pytest

from keras_bert3.data import BatchingConfig
from keras_bert3.data import MaskingConfig
from keras_bert3.data import PairingConfig
from keras_bert3.data import pretraining_dataset
from keras_bert3.data import prepare_pretraining_data
from keras_bert3.data import read_paired_shards
from keras_bert3.data.pair_packing import PACKING_WINDOW
from keras_bert3.data.pair_packing import default_max_pairs_per_row
from keras_bert3.data.pair_packing import max_predictions_per_row
from keras_bert3.data.pair_packing import pack_pairs
from keras_bert3_demo import default_corpus_documents

pytestmark = pytest.mark.backend_free  # The pipeline is TensorFlow under either backend: one pass.

ROW_LENGTH, ROWS = 256, 8
PAIRS, MASKS = PairingConfig(sequence_length=64), MaskingConfig(max_predictions_per_seq=10)


def assert_packs_the_unpacked_stream(packed, unpacked_windows):
    """`packed` (batches of ROWS rows) is `unpacked_windows` (batches of
    PACKING_WINDOW masked pairs) packed window by window, then cut into
    batches; it fills its rows and fits every row in its fixed slots."""
    max_pairs = default_max_pairs_per_row(ROW_LENGTH)
    predictions = max_predictions_per_row(ROW_LENGTH, max_pairs, 0.15)
    shapes = {key: spec.shape.as_list() for part in packed.element_spec for key, spec in part.items()}
    assert shapes == {
        "token_ids": [ROWS, ROW_LENGTH],
        "segment_ids": [ROWS, ROW_LENGTH],
        "padding_mask": [ROWS, ROW_LENGTH],
        "pair_ids": [ROWS, ROW_LENGTH],
        "mask_positions": [ROWS, predictions],
        "nsp_positions": [ROWS, max_pairs],
        "mlm": [ROWS, predictions],
        "nsp": [ROWS, max_pairs],
    }
    expected = {}
    windows = list(unpacked_windows.as_numpy_iterator())
    assert len(windows) == 2 and len(windows[0][0]["token_ids"]) == PACKING_WINDOW
    for x, y, w in windows:
        rows = pack_pairs(x, y, w, ROW_LENGTH, max_pairs_per_row=max_pairs, max_predictions_per_row=predictions)
        for prefix, part in zip(("x", "y", "w"), rows):
            for key, value in part.items():
                expected.setdefault(f"{prefix}_{key}", []).append(value.numpy())
    expected = {key: np.concatenate(values) for key, values in expected.items()}
    batches = list(packed.take(len(expected["x_token_ids"]) // ROWS).as_numpy_iterator())
    assert len(batches) >= 4
    for b, (x, y, w) in enumerate(batches):
        for prefix, part in zip(("x", "y", "w"), (x, y, w)):
            for key, value in part.items():
                np.testing.assert_array_equal(
                    value, expected[f"{prefix}_{key}"][b * ROWS : (b + 1) * ROWS], err_msg=key
                )
    filled = np.mean([(x["padding_mask"] > 0).mean() for x, _, _ in batches])
    assert filled > 0.85, filled  # Pairs of at most 64 tokens fill rows of 256.


@pytest.mark.slow
def test_packed_stream_is_the_unpacked_stream_packed(tokenizer, corpus_path):
    rows = BatchingConfig(batch_size=ROWS, packed_length=ROW_LENGTH, drop_remainder=True)
    packed = pretraining_dataset(corpus_path, tokenizer, PAIRS, MASKS, rows, seed=3)
    unpacked = pretraining_dataset(
        corpus_path, tokenizer, PAIRS, MASKS, BatchingConfig(batch_size=PACKING_WINDOW), seed=3
    )
    unpacked = unpacked.take(2)
    assert_packs_the_unpacked_stream(packed, unpacked)


@pytest.mark.slow
def test_packed_shards_are_the_unpacked_shards_packed(tmp_path, tokenizer):
    corpus = tmp_path / "corpus.txt"  # 300 documents: more than two windows of pairs.
    corpus.write_text(
        "\n\n".join("\n".join(document) for document in default_corpus_documents()[:300]) + "\n", encoding="utf-8"
    )
    prepare_pretraining_data(
        str(corpus),
        tokenizer,
        str(tmp_path / "shards"),
        PairingConfig(sequence_length=64),
        num_shards=2,
        workers=1,
        seed=3,
        verbose=False,
    )
    rows = BatchingConfig(batch_size=ROWS, packed_length=ROW_LENGTH, drop_remainder=True)
    packed = read_paired_shards(str(tmp_path / "shards"), tokenizer, MASKS, rows, seed=3)
    unpacked = read_paired_shards(
        str(tmp_path / "shards"), tokenizer, MASKS, BatchingConfig(batch_size=PACKING_WINDOW), seed=3
    )
    unpacked = unpacked.take(2)
    assert_packs_the_unpacked_stream(packed, unpacked)


def test_rows_shorter_than_the_pairs_are_refused(tokenizer, corpus_path):
    with pytest.raises(ValueError, match=r"--packed-length 32 must be at least --sequence-length 64"):
        pretraining_dataset(corpus_path, tokenizer, PAIRS, MASKS, BatchingConfig(packed_length=32), seed=3)
