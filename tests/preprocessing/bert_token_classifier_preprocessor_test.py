"""BertTokenClassifierPreprocessor: words to WordPiece tokens with each word's
label on its first piece, equal to Hugging Face's fast tokenizer
(`is_split_into_words`, `word_ids`) with and without truncation."""

import numpy as np
import tensorflow as tf
import pytest

from keras_bert3.preprocessing.bert_token_classifier_preprocessor import BertTokenClassifierPreprocessor
from tests.hf_helpers import hf_first_pieces
from tests.reference import import_reference

pytestmark = pytest.mark.backend_free  # TensorFlow and tf-text only: no Keras backend reaches it.

# Words that tokenize oddly: empty, control-only, over 100 characters, special-token text, non-ASCII.
ODD_WORDS = [["", "a", "\x00", "b"], ["x" * 150, "Straße", "東京", "[MASK]", "os.walk()"]]


def ragged(rows, dtype="string"):
    return tf.ragged.constant(rows, dtype=dtype)


def test_alignment_equals_hugging_face(minilm_dir, tokenizer, tags):
    transformers = import_reference("transformers")
    hf = transformers.BertTokenizerFast.from_pretrained(minilm_dir)
    words = tags["test_words"][:300] + ODD_WORDS
    labels = tags["test_tags"][:300] + [[0, 1, 2, 0], [1, 0, 0, 2, 1]]
    ragged_words = BertTokenClassifierPreprocessor.as_words(ragged(words))
    ragged_labels = ragged(labels, dtype="int32")
    for sequence_length in (64, 16):  # 16: most sentences are truncated.
        preprocessor = BertTokenClassifierPreprocessor(tokenizer, sequence_length=sequence_length, pad_to_multiple_of=1)
        model_inputs = {k: v.numpy() for k, v in preprocessor(ragged_words, ragged_labels).items()}
        encoding = hf(words, is_split_into_words=True, truncation=True, max_length=sequence_length, padding="longest")
        np.testing.assert_array_equal(model_inputs["token_ids"], encoding["input_ids"])
        np.testing.assert_array_equal(model_inputs["padding_mask"], encoding["attention_mask"])
        agree, dropped = 0, 0
        for i, sentence in enumerate(words):
            expected = hf_first_pieces(encoding, i, len(sentence))
            assert list(model_inputs["word_positions"][i, : len(sentence)]) == expected, i
            expected_labels = np.full(model_inputs["labels"].shape[1], -100)
            for word, position in enumerate(expected):
                if position >= 0:
                    expected_labels[position] = labels[i][word]
            np.testing.assert_array_equal(model_inputs["labels"][i], expected_labels)
            agree += 1
            dropped += expected.count(-1)
        print(
            f"sequence_length={sequence_length}: {agree}/{len(words)} sentences agree, {dropped} words without a piece"
        )
        assert dropped > (1000 if sequence_length == 16 else 3)  # Truncation (and empty words) were exercised.
