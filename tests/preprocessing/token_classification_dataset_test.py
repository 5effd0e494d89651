"""token_classification_dataset: full batches, each sentence once, its labels
on its own tokens (MiniLM's real vocabulary, the embedded code-tagging set)."""

import pytest

from keras_bert3.preprocessing.bert_token_classifier_preprocessor import BertTokenClassifierPreprocessor
from keras_bert3.preprocessing.token_classification_dataset import token_classification_dataset

pytestmark = pytest.mark.backend_free  # TensorFlow and tf-text only: no Keras backend reaches it.


def test_bucketed_batches_are_full_and_keep_labels_with_their_tokens(tokenizer, tags):
    preprocessor = BertTokenClassifierPreprocessor(tokenizer, sequence_length=64)
    words, labels = tags["train_words"][:300], tags["train_tags"][:300]

    def examples(**options):
        batches = token_classification_dataset(words, labels, preprocessor=preprocessor, batch_size=16, **options)
        assert int(batches.cardinality()) == 19  # 300 / 16, known without a counting pass.
        rows, sizes, padded = [], [], 0
        for model_inputs, y in batches:
            mask = model_inputs["padding_mask"].numpy().astype(bool)
            padded += mask.size
            sizes.append(len(mask))
            rows += [(tuple(t[m]), tuple(l[m])) for t, l, m in zip(model_inputs["token_ids"].numpy(), y.numpy(), mask)]
        return sorted(rows), sizes, padded

    in_order, _, unbucketed = examples(bucket=False)
    bucketed, sizes, padded = examples(shuffle=True, seed=0)
    assert bucketed == in_order  # Every sentence once, its labels on its own tokens.
    assert sorted(sizes)[1:] == [16] * (len(sizes) - 1)  # Full batches but one.
    assert padded < unbucketed
