"""Packed pretraining rows (`pack_pairs`, `BertPretrainer(packed=True)`): real
pairs of the embedded corpus, made and masked by `pretraining_dataset`, packed
into rows of 512 tokens, give the loss and the per-token outputs of the same
pairs unpacked."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_bert3.data.pretraining_dataset import pretraining_dataset
from keras_bert3.layers.packed_sequences import packed_attention_mask
from keras_bert3.layers.packed_sequences import packed_positions
from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.bert_pretrainer import BertPretrainer
from keras_bert3.data.pair_packing import pack_pairs
from keras_bert3_demo import default_corpus_path
from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.pairing_config import PairingConfig

ROW_LENGTH = 512


@pytest.fixture(scope="module")
def pairs(tokenizer):
    """One batch of 48 masked pairs of at most 128 tokens, many shorter (short_seq_prob 0.5)."""
    dataset = pretraining_dataset(
        default_corpus_path(),
        tokenizer,
        PairingConfig(sequence_length=128, short_seq_prob=0.5),
        batching=BatchingConfig(batch_size=48),
        seed=3,
    )
    return next(iter(dataset))


def pretrainers(tokenizer):
    """An unpacked and a packed pretrainer on one backbone, with the same head weights; no dropout."""
    keras.utils.set_random_seed(0)
    backbone = BertBackbone(
        vocabulary_size=tokenizer.vocabulary_size(),
        num_layers=2,
        num_heads=2,
        hidden_dim=16,
        intermediate_dim=32,
        max_sequence_length=ROW_LENGTH,
        dropout=0.0,
    )
    unpacked, packed = BertPretrainer(backbone), BertPretrainer(backbone, packed=True)
    packed.masked_lm_head.set_weights(unpacked.masked_lm_head.get_weights())
    packed.next_sentence_head.set_weights(unpacked.next_sentence_head.get_weights())
    return unpacked, packed


def loss_of(model, x, y, w) -> float:
    y_pred = model(x, training=False)
    return float(keras.ops.convert_to_numpy(model.compute_loss(x, y, y_pred, w, training=False)))


@pytest.mark.slow
def test_a_packed_batch_has_the_loss_of_its_pairs_unpacked(pairs, tokenizer):
    x, y, w = pairs
    packed_x, packed_y, packed_w = (dict(part) for part in pack_pairs(x, y, w, ROW_LENGTH))
    rows, pairs_in_rows = packed_x["nsp_positions"].shape
    assert rows < 48 and pairs_in_rows > 1  # Really packed: fewer rows than pairs.
    unpacked, packed = pretrainers(tokenizer)
    expected = loss_of(unpacked, x, y, w)
    assert abs(loss_of(packed, packed_x, packed_y, packed_w) - expected) <= 1e-5

    # Token by token: each masked token's MLM logits, and each pair's NSP logits, as unpacked.
    unpacked_out = {k: keras.ops.convert_to_numpy(v) for k, v in unpacked(x, training=False).items()}
    packed_out = {k: keras.ops.convert_to_numpy(v) for k, v in packed(packed_x, training=False).items()}
    weights, packed_weights = w["mlm"].numpy() > 0, packed_w["mlm"].numpy() > 0
    np.testing.assert_allclose(packed_out["mlm"][packed_weights], unpacked_out["mlm"][weights], atol=1e-4)
    np.testing.assert_allclose(packed_out["nsp"][packed_w["nsp"].numpy() > 0], unpacked_out["nsp"], atol=1e-5)

    # Without the packed mask and positions (pairs seeing each other), the loss is another.
    leaky_x = {key: value for key, value in packed_x.items() if key not in ("pair_ids", "nsp_positions")}
    leaky_mlm = keras.ops.convert_to_numpy(unpacked(leaky_x, training=False)["mlm"])[packed_weights]
    assert np.abs(leaky_mlm - unpacked_out["mlm"][weights]).max() > 1e-2


@pytest.mark.backend_free
@pytest.mark.slow
def test_packing_keeps_every_pair_whole_and_in_order(pairs):
    x, y, w = pairs
    packed_x, packed_y, packed_w = pack_pairs(x, y, w, ROW_LENGTH)
    lengths = tf.reduce_sum(x["padding_mask"], axis=1).numpy()
    token_ids, sequence_ids = packed_x["token_ids"].numpy(), packed_x["pair_ids"].numpy()
    np.testing.assert_array_equal(packed_x["padding_mask"].numpy(), sequence_ids > 0)  # 0/1, as everywhere.
    rebuilt = [
        row[sequence_ids[r] == k] for r, row in enumerate(token_ids) for k in range(1, sequence_ids[r].max() + 1)
    ]
    assert len(rebuilt) == len(lengths)
    for pair, original, length in zip(rebuilt, x["token_ids"].numpy(), lengths):
        np.testing.assert_array_equal(pair, original[:length])  # Whole, contiguous, in order.
    assert (np.diff(np.nonzero(sequence_ids.ravel())[0]) >= 1).all()
    np.testing.assert_array_equal(packed_y["nsp"].numpy()[packed_w["nsp"].numpy() > 0], y["nsp"].numpy().ravel())
    # Every [CLS] position holds a pair's first token.
    cls = np.take_along_axis(token_ids, packed_x["nsp_positions"].numpy(), axis=1)[packed_w["nsp"].numpy() > 0]
    assert (cls == x["token_ids"].numpy()[:, 0]).all()


@pytest.mark.backend_free
def test_a_pair_longer_than_the_row_is_refused(pairs):
    x, y, w = pairs
    with pytest.raises(tf.errors.InvalidArgumentError, match="a pair is longer than the packed row of 64 tokens"):
        pack_pairs(x, y, w, row_length=64)


def test_sequences_cannot_see_each_other_whatever_their_numbers():
    """The mask and positions derive from the sequence numbers alone: no
    numbering (even one that interleaves sequences) lets two of them meet."""
    sequence_ids = np.array([[1, 1, 2, 2, 2, 1, 0, 0], [3, 3, 3, 3, 3, 3, 3, 3]], "int32")
    mask = keras.ops.convert_to_numpy(packed_attention_mask(sequence_ids))
    same = (sequence_ids[:, :, None] == sequence_ids[:, None, :]) & (sequence_ids[:, None, :] > 0)
    np.testing.assert_array_equal(mask, same)
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(packed_positions(sequence_ids)), [[0, 1, 0, 1, 2, 2, 0, 1], list(range(8))]
    )


@pytest.mark.slow
def test_a_packed_pretrainer_trains_on_the_packed_stream(tokenizer):
    """`pretraining_dataset(..., batching=BatchingConfig(packed_length=...))` rows, one shape for every batch, train."""
    rows = pretraining_dataset(
        default_corpus_path(),
        tokenizer,
        PairingConfig(sequence_length=128, short_seq_prob=0.5),
        batching=BatchingConfig(batch_size=2, packed_length=ROW_LENGTH, drop_remainder=True),
        seed=3,
    )
    _, packed = pretrainers(tokenizer)
    packed.compile(learning_rate=1e-3, total_steps=4, precision="float32")
    history = packed.fit(rows, steps_per_epoch=4, epochs=1, verbose=0).history
    assert np.isfinite(history["loss"]).all() and 0 < history["nsp_loss"][-1] < 2
    restored = BertPretrainer.from_config(packed.get_config())
    assert restored.packed and {"pair_ids", "nsp_positions"} <= set(restored.input)
