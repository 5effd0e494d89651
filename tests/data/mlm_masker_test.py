"""MlmMasker on a tiny vocabulary: counts, padding, whole words, tf.data."""

import numpy as np
import pytest
import tensorflow as tf

from keras_bert3.data import MlmMasker
from keras_bert3.tokenizers import BertTokenizer

pytestmark = pytest.mark.backend_free  # The pipeline is TensorFlow under either backend: one pass.

VOCAB = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "[unused0]",
    "the",
    "fox",
    "jump",
    "##s",
    "##ed",
    "over",
    "dog",
    ".",
]


def test_counts_padding_and_random_tokens():
    tokenizer = BertTokenizer(VOCAB)
    model_inputs = tokenizer.join_segments(
        ["the fox jumps over the dog ."] * 64, ["the dog jumped ."] * 64, sequence_length=16
    )
    out = MlmMasker(tokenizer, max_predictions_per_seq=4)(
        model_inputs["token_ids"], model_inputs["padding_mask"], seed=[0, 1]
    )
    weights = out["mask_weights"].numpy()
    assert out["mask_positions"].shape == (64, 4) and out["mask_ids"].dtype == tf.int32
    n = model_inputs["padding_mask"].numpy().sum(axis=1) - 3  # Less [CLS] and two [SEP].
    np.testing.assert_array_equal(weights.sum(axis=1), np.minimum(4, np.maximum(1, np.round(n * 0.15))))
    assert (out["mask_positions"].numpy()[weights == 0] == 0).all()
    changed = out["token_ids"].numpy() != model_inputs["token_ids"].numpy()
    replaced = out["token_ids"].numpy()[changed]
    assert not np.isin(replaced, [0, 1, 2, 3, 5]).any()  # Never special or bracketed tokens.


def test_whole_words_and_tf_data():
    tokenizer = BertTokenizer(VOCAB)
    model_inputs = tokenizer.join_segments(
        ["jumped jumps jumped jumps"] * 32, sequence_length=12
    )  # Every word is 2 tokens.
    masker = MlmMasker(tokenizer, max_predictions_per_seq=4, masked_lm_prob=0.3, whole_word_masking=True)
    eager = masker(model_inputs["token_ids"], model_inputs["padding_mask"], seed=[5, 6])
    positions = eager["mask_positions"].numpy()
    assert (eager["mask_weights"].numpy().sum(axis=1) == 2).all()  # round(8 * 0.3) = 2: one word.
    assert (positions[:, 0] % 2 == 1).all() and (positions[:, 1] == positions[:, 0] + 1).all()
    dataset = tf.data.Dataset.from_tensors((model_inputs["token_ids"], model_inputs["padding_mask"]))
    graph = next(iter(dataset.map(lambda ids, mask: masker(ids, mask, tf.constant([5, 6])))))
    for key in eager:
        np.testing.assert_array_equal(eager[key], graph[key])
