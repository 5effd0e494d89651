"""Each step of `pack_pairs` on its own, on real masked pairs of the
embedded corpus, against a packer written out here in plain Python (pairs
laid end to end in order, a new row where the next pair does not fit)."""

import numpy as np
import pytest
import tensorflow as tf

from keras_bert3.data import pair_packing as steps
from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.pairing_config import PairingConfig
from keras_bert3.data.pretraining_dataset import pretraining_dataset
from keras_bert3_demo import default_corpus_path

pytestmark = pytest.mark.backend_free  # TensorFlow ops under either backend: one pass.

ROW_LENGTH = 256


@pytest.fixture(scope="module")
def pairs(tokenizer):
    """A batch of 96 masked pairs of at most 64 tokens, many shorter, as numpy arrays."""
    dataset = pretraining_dataset(
        default_corpus_path(),
        tokenizer,
        PairingConfig(sequence_length=64, short_seq_prob=0.5),
        batching=BatchingConfig(batch_size=96),
        seed=11,
    )
    return next(dataset.as_numpy_iterator())


def python_rows(lengths, row_length, max_pairs=None):
    """Each pair's row, offset in it and place among its pairs, in a loop."""
    rows, offsets, places = [], [], []
    row, used, count = -1, row_length, 0
    for length in lengths:
        if used + length > row_length or (max_pairs is not None and count == max_pairs):
            row, used, count = row + 1, 0, 0
        rows.append(row), offsets.append(used), places.append(count)
        used, count = used + length, count + 1
    return np.array(rows, np.int32), np.array(offsets, np.int32), np.array(places, np.int32)


def python_layout(pairs, max_pairs=None):
    x = pairs[0]
    lengths = (x["padding_mask"] != 0).sum(axis=1).astype(np.int32)
    return (lengths, *python_rows(lengths, ROW_LENGTH, max_pairs))


def test_pair_lengths_count_real_tokens_and_refuse_pairs_longer_than_a_row(pairs):
    x = pairs[0]
    lengths = steps.pair_lengths(x["padding_mask"], ROW_LENGTH).numpy()
    np.testing.assert_array_equal(lengths, [np.count_nonzero(row) for row in x["padding_mask"]])
    assert len(set(lengths)) > 5  # Pairs of many lengths.
    with pytest.raises(tf.errors.InvalidArgumentError, match="a pair is longer than the packed row of 32"):
        steps.pair_lengths(x["padding_mask"], 32)


@pytest.mark.parametrize("max_pairs", [None, 3])
def test_greedy_rows_lay_pairs_end_to_end_in_order(pairs, max_pairs):
    lengths, expected_rows, expected_offsets, expected_places = python_layout(pairs, max_pairs)
    rows, offsets = steps.greedy_rows(tf.constant(lengths, tf.int32), ROW_LENGTH, max_pairs)
    np.testing.assert_array_equal(rows, expected_rows)
    np.testing.assert_array_equal(offsets, expected_offsets)
    assert (offsets.numpy() + lengths <= ROW_LENGTH).all() and expected_rows[-1] < len(lengths) - 1  # Really packed.
    num_rows, pair_in_row = steps.pairs_in_rows(rows)
    assert int(num_rows) == expected_rows[-1] + 1
    np.testing.assert_array_equal(pair_in_row, expected_places)
    if max_pairs is not None:
        assert expected_places.max() == max_pairs - 1


def test_greedy_rows_fill_rows_exactly_and_start_one_for_a_pair_that_does_not_fit():
    lengths = np.array([100, 156, 10, 246, 1, 255, 256, 3, 254, 2], np.int32)  # Rows filled to the last token.
    rows, offsets = steps.greedy_rows(tf.constant(lengths), ROW_LENGTH)
    expected_rows, expected_offsets, _ = python_rows(lengths, ROW_LENGTH)
    np.testing.assert_array_equal(rows, expected_rows)
    np.testing.assert_array_equal(offsets, expected_offsets)
    np.testing.assert_array_equal(rows, [0, 0, 1, 1, 2, 2, 3, 4, 5, 5])


def test_pairs_in_rows_of_no_pair():
    num_rows, pair_in_row = steps.pairs_in_rows(tf.zeros([0], tf.int32))
    assert int(num_rows) == 0 and pair_in_row.shape == (0,)


def test_packed_tokens_move_each_pair_to_its_row_and_offset(pairs):
    x = pairs[0]
    lengths, rows, offsets, places = python_layout(pairs)
    num_rows = rows[-1] + 1
    packed = steps.packed_tokens(x, lengths, rows, offsets, num_rows, ROW_LENGTH, places)
    for key in ("token_ids", "segment_ids"):
        expected = np.zeros([num_rows, ROW_LENGTH], np.int32)
        for pair, (row, offset, length) in enumerate(zip(rows, offsets, lengths)):
            expected[row, offset : offset + length] = x[key][pair, :length]
        np.testing.assert_array_equal(packed[key], expected, err_msg=key)
    numbers = np.zeros([num_rows, ROW_LENGTH], np.int32)
    for row, offset, length, place in zip(rows, offsets, lengths, places):
        numbers[row, offset : offset + length] = place + 1
    np.testing.assert_array_equal(packed["pair_ids"], numbers)
    np.testing.assert_array_equal(packed["padding_mask"], numbers > 0)


@pytest.mark.parametrize("width", [None, 60])
def test_row_predictions_hold_the_rows_real_predictions_in_order(pairs, width):
    x, y, w = pairs
    lengths, rows, offsets, _ = python_layout(pairs)
    num_rows = rows[-1] + 1
    kept = steps.row_prediction_indices(w["mlm"], rows, num_rows, width)
    positions = steps.row_predictions(x["mask_positions"] + offsets[:, None], kept, 0, width).numpy()
    targets = steps.row_predictions(y["mlm"], kept, 0, width).numpy()
    weights = steps.row_predictions(w["mlm"], kept, 0.0, width).numpy()
    for row in range(num_rows):
        real = [(pair, k) for pair in np.flatnonzero(rows == row) for k in np.flatnonzero(w["mlm"][pair] > 0)]
        n = len(real)
        assert n > 0 and (weights[row, n:] == 0).all() and (positions[row, n:] == 0).all()
        np.testing.assert_array_equal(positions[row, :n], [x["mask_positions"][p, k] + offsets[p] for p, k in real])
        np.testing.assert_array_equal(targets[row, :n], [y["mlm"][p, k] for p, k in real])
        np.testing.assert_array_equal(weights[row, :n], [w["mlm"][p, k] for p, k in real])
    assert positions.shape[1] == (width or max(np.bincount(rows, weights=(w["mlm"] > 0).sum(axis=1)).astype(int)))


def test_rows_with_more_predictions_than_slots_are_refused(pairs):
    _, _, w = pairs
    rows = np.zeros(len(w["mlm"]), np.int32)  # Every pair in one row.
    with pytest.raises(tf.errors.InvalidArgumentError, match="more masked positions than its 20 prediction slots"):
        steps.row_prediction_indices(w["mlm"], rows, 1, 20)


@pytest.mark.parametrize("max_pairs", [None, 4])
def test_packed_nsp_gives_each_pair_its_cls_position_and_label(pairs, max_pairs):
    _, y, _ = pairs
    lengths, rows, offsets, places = python_layout(pairs, max_pairs)
    num_rows = rows[-1] + 1
    positions, labels, weights = steps.packed_nsp(y["nsp"], rows, offsets, num_rows, max_pairs)
    slots = max_pairs or places.max() + 1
    expected = np.zeros([3, num_rows, slots])
    for pair, (row, place) in enumerate(zip(rows, places)):
        expected[:, row, place] = offsets[pair], np.reshape(y["nsp"], [-1])[pair], 1.0
    for part, value in zip(expected, (positions, labels, weights)):
        np.testing.assert_array_equal(value, part)
    assert positions.dtype == tf.int32 and labels.dtype == tf.int32 and weights.dtype == tf.float32
    assert 0 < np.mean(labels.numpy()[weights.numpy() > 0]) < 1  # Both labels.
