"""BertTextPreprocessor: strings to model inputs, padded to the batch's
longest example (MiniLM's real vocabulary, real docstring sentences)."""

import numpy as np
import pytest

from keras_bert3.preprocessing.bert_text_preprocessor import BertTextPreprocessor

pytestmark = pytest.mark.backend_free  # TensorFlow and tf-text only: no Keras backend reaches it.


def test_preprocessor_pads_to_the_batch_longest_example(tokenizer, topics):
    texts = topics["train_texts"][:8]
    preprocessor = BertTextPreprocessor(tokenizer, sequence_length=64, pad_to_multiple_of=1)
    model_inputs = preprocessor(texts)
    real = tokenizer(texts).row_lengths().numpy() + 2
    assert model_inputs["token_ids"].shape == (8, min(real.max(), 64))
    np.testing.assert_array_equal(model_inputs["padding_mask"].numpy().sum(1), np.minimum(real, 64))
    full = tokenizer.join_segments(texts, sequence_length=64)
    width = model_inputs["token_ids"].shape[1]
    for name in model_inputs:
        np.testing.assert_array_equal(model_inputs[name].numpy(), full[name].numpy()[:, :width])
    rounded = BertTextPreprocessor(tokenizer, sequence_length=64, pad_to_multiple_of=16)(texts)
    assert rounded["token_ids"].shape[1] == min(-(-real.max() // 16) * 16, 64)
