"""The task datasets tokenize each text once (`ragged_rows`) and still give
every batch exactly what the preprocessor gives for that batch's texts: the
same ids, segments, mask and labels, padded to the batch's longest example."""

import numpy as np
import pytest
import tensorflow as tf

from keras_bert3.preprocessing.bert_text_preprocessor import BertTextPreprocessor
from keras_bert3.preprocessing.bert_token_classifier_preprocessor import BertTokenClassifierPreprocessor
from keras_bert3.preprocessing.text_classification_dataset import text_classification_dataset
from keras_bert3.preprocessing.token_classification_dataset import token_classification_dataset
from keras_bert3_demo.docstring_code_tags import docstring_code_tags
from keras_bert3_demo.docstring_topics import docstring_topics

pytestmark = pytest.mark.backend_free  # TensorFlow and tf-text only: no Keras backend reaches it.


@pytest.fixture(scope="module")
def texts():
    return docstring_topics()["train_texts"][:300]


class CountingTextPreprocessor(BertTextPreprocessor):
    """A real preprocessor that also counts the texts it tokenizes (when the graph runs)."""

    tokenized = 0

    def call(self, inputs):
        first = inputs[0] if isinstance(inputs, tuple) else inputs

        def count(batch):
            CountingTextPreprocessor.tokenized += int(batch.shape[0])
            return 0

        with tf.control_dependencies([tf.py_function(count, [first], tf.int64)]):
            return {name: tf.identity(value) for name, value in super().call(inputs).items()}


def assert_batches_equal_the_preprocessor(dataset, pack, n):
    """Each batch equals `pack(rows)` for the rows its targets name; every row comes once."""
    seen = []
    for inputs, rows, *_ in dataset:
        rows = rows.numpy()
        expected = pack(rows)
        for name, value in inputs.items():
            assert value.dtype == expected[name].dtype, name
            np.testing.assert_array_equal(value.numpy(), expected[name].numpy(), err_msg=name)
        seen += list(rows)
    assert sorted(seen) == list(range(n))


@pytest.mark.parametrize("options", [dict(bucket=False), dict(shuffle=True, seed=0)])
def test_text_batches_equal_the_preprocessor_on_their_texts(tokenizer, texts, options):
    preprocessor = BertTextPreprocessor(tokenizer, sequence_length=48, pad_to_multiple_of=16)
    dataset = text_classification_dataset(
        texts, np.arange(len(texts)), preprocessor=preprocessor, batch_size=16, **options
    )
    assert_batches_equal_the_preprocessor(
        dataset, lambda rows: preprocessor(tf.constant([texts[i] for i in rows])), len(texts)
    )


@pytest.mark.slow
def test_pair_batches_and_datasets_of_texts_equal_the_preprocessor(tokenizer, texts):
    seconds = texts[::-1]
    pairs = BertTextPreprocessor(tokenizer, sequence_length=48, sentence_pairs=True)
    dataset = text_classification_dataset(
        (texts, seconds), np.arange(len(texts)), preprocessor=pairs, batch_size=16, shuffle=True
    )
    join_pairs = lambda rows: pairs((tf.constant([texts[i] for i in rows]), tf.constant([seconds[i] for i in rows])))  # noqa: E731
    assert_batches_equal_the_preprocessor(dataset, join_pairs, len(texts))

    single = BertTextPreprocessor(tokenizer, sequence_length=48)
    stream = tf.data.Dataset.from_tensor_slices((texts, np.arange(len(texts))))
    dataset = text_classification_dataset(stream, preprocessor=single, batch_size=16, shuffle=True, seed=0)
    assert_batches_equal_the_preprocessor(
        dataset, lambda rows: single(tf.constant([texts[i] for i in rows])), len(texts)
    )


def test_word_batches_equal_the_preprocessor_on_their_sentences(tokenizer):
    tags = docstring_code_tags()
    words, labels = tags["train_words"][:200], tags["train_tags"][:200]
    preprocessor = BertTokenClassifierPreprocessor(tokenizer, sequence_length=32)
    # Each sentence's weight is its index, which names it in the batch.
    dataset = token_classification_dataset(
        words,
        labels,
        preprocessor=preprocessor,
        batch_size=16,
        shuffle=True,
        seed=0,
        sample_weight=np.arange(len(words)),
    )
    seen = []
    for inputs, token_labels, weights in dataset:
        rows = weights.numpy().astype(int)
        expected = preprocessor(
            tf.ragged.constant([words[i] for i in rows]), tf.ragged.constant([labels[i] for i in rows])
        )
        for name, value in dict(inputs, labels=token_labels).items():
            np.testing.assert_array_equal(value.numpy(), expected[name].numpy(), err_msg=name)
        seen += list(rows)
    assert sorted(seen) == list(range(len(words)))


def test_each_text_is_tokenized_once_however_many_epochs(tokenizer, texts):
    preprocessor = CountingTextPreprocessor(tokenizer, sequence_length=48)
    CountingTextPreprocessor.tokenized = 0
    dataset = text_classification_dataset(texts, np.zeros(len(texts), "int32"), preprocessor=preprocessor, shuffle=True)
    for _ in range(3):  # Three epochs.
        assert sum(len(y) for _, y in dataset) == len(texts)
    assert CountingTextPreprocessor.tokenized == len(texts)
