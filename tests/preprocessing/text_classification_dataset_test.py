"""text_classification_dataset: full batches of similar lengths, each text
once (MiniLM's real vocabulary, real docstring sentences)."""

import numpy as np
import pytest

from keras_bert3.preprocessing.bert_text_preprocessor import BertTextPreprocessor
from keras_bert3.preprocessing.text_classification_dataset import text_classification_dataset

pytestmark = pytest.mark.backend_free  # TensorFlow and tf-text only: no Keras backend reaches it.


def test_bucketed_batches_group_similar_lengths(tokenizer, topics):
    preprocessor = BertTextPreprocessor(tokenizer, sequence_length=64, pad_to_multiple_of=16)
    texts, labels = topics["train_texts"][:300], topics["train_labels"][:300]
    dataset = text_classification_dataset(texts, labels, preprocessor=preprocessor, batch_size=16, shuffle=True, seed=0)
    seen, padded, shapes, batch_sizes = 0, 0, set(), []
    for model_inputs, y in dataset:
        seen += len(y)
        padded += model_inputs["token_ids"].shape[0] * model_inputs["token_ids"].shape[1]
        shapes.add(tuple(model_inputs["token_ids"].shape))
        batch_sizes.append(len(y))
    assert seen == 300
    assert sorted(batch_sizes)[1:] == [16] * (len(batch_sizes) - 1)  # Full batches but one.
    assert int(dataset.cardinality()) == len(batch_sizes)  # Known without a counting pass.
    widths = {w for _, w in shapes}
    assert len(shapes) <= len(widths) + 1  # One shape per padded width, plus the last batch.
    unbucketed = sum(
        p["token_ids"].shape[0] * p["token_ids"].shape[1]
        for p, _ in text_classification_dataset(texts, labels, preprocessor=preprocessor, batch_size=16, bucket=False)
    )
    real = int(np.minimum(tokenizer(texts).row_lengths().numpy() + 2, 64).sum())
    # Grouped by length, the padding is at most the rounding to 16 plus a little.
    assert padded < unbucketed and padded < real + 300 * 16, (padded, unbucketed, real)
