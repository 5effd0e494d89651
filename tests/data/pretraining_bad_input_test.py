"""Bad input gives a clear error or a counted skip: never a crash, never a hang."""

import os

import numpy as np
import pytest
import tensorflow as tf

from keras_bert3.data import DataCounters
from keras_bert3.data import pretraining_dataset
from keras_bert3.tokenizers import BertTokenizer
from keras_bert3_demo import default_corpus_documents
from tests.data.conftest import collect
from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.masking_config import MaskingConfig
from keras_bert3.data.pairing_config import PairingConfig

pytestmark = pytest.mark.backend_free  # The pipeline is TensorFlow under either backend: one pass.


def write(path, text) -> str:
    mode = "wb" if isinstance(text, bytes) else "w"
    with open(path, mode) as f:
        f.write(text)
    return str(path)


def real_corpus(path, documents: int = 20) -> str:
    return write(path, "\n\n".join("\n".join(d) for d in default_corpus_documents()[:documents]) + "\n")


def test_glob_matching_nothing(tokenizer, tmp_path):
    with pytest.raises(ValueError, match="No file matches"):
        pretraining_dataset(str(tmp_path / "*.txt"), tokenizer)


@pytest.mark.slow
def test_empty_files_are_counted_and_an_empty_corpus_is_an_error(tokenizer, tmp_path):
    real_corpus(tmp_path / "a.txt")
    write(tmp_path / "b.txt", "")
    counters = DataCounters()
    assert len(collect(pretraining_dataset(str(tmp_path / "*.txt"), tokenizer, counters=counters))["token_ids"])
    assert counters.empty_files == 1 and counters.files == 2
    with pytest.raises(ValueError, match="corpus is empty"):
        pretraining_dataset(str(tmp_path / "b.txt"), tokenizer)
    write(tmp_path / "blank.txt", "\n \n\n\t\n")  # Bytes, but no text.
    with pytest.raises(tf.errors.InvalidArgumentError, match="no document with text"):
        collect(pretraining_dataset(str(tmp_path / "blank.txt"), tokenizer))


def test_documents_of_one_sentence(tokenizer, tmp_path):
    sentences = [d[0] for d in default_corpus_documents()[:50]]
    counters = DataCounters()
    data = collect(pretraining_dataset(write(tmp_path / "c.txt", "\n\n".join(sentences)), tokenizer, counters=counters))
    assert counters.single_sentence_documents == 50 == counters.documents
    assert (data["y_nsp"] == 1).all()  # No continuation exists: all random next, as the original.


@pytest.mark.slow
def test_a_single_document(tokenizer, tmp_path):
    path = real_corpus(tmp_path / "one.txt", documents=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="single document.*next_sentence_prediction=False"):
        collect(pretraining_dataset(path, tokenizer))
    data = collect(pretraining_dataset(path, tokenizer, PairingConfig(next_sentence_prediction=False)))
    assert len(data["token_ids"]) and (data["segment_ids"] == 0).all()


@pytest.mark.slow
def test_invalid_utf8_is_replaced_and_counted(tokenizer, tmp_path):
    text = real_corpus(tmp_path / "ok.txt").encode()
    path = write(tmp_path / "bad.txt", b"Broken \xff\xfe bytes here.\nAnd \xc3 more.\n\n" + open(text, "rb").read())
    counters = DataCounters()
    data = collect(pretraining_dataset(path, tokenizer, counters=counters))
    assert counters.invalid_utf8_sentences == 2 and len(data["token_ids"])


@pytest.mark.slow
def test_a_sentence_of_100000_characters(tokenizer, tmp_path):
    words = " ".join(default_corpus_documents()[0])
    long_sentence = (words * (100_000 // len(words) + 1))[:100_000].replace("\n", " ")
    path = real_corpus(tmp_path / "long.txt")
    with open(path, "a") as f:
        f.write(f"\nShort start.\n{long_sentence}\nShort end.\n")
    counters = DataCounters()
    data = collect(pretraining_dataset(path, tokenizer, batching=BatchingConfig(batch_size=64), counters=counters))
    assert data["padding_mask"].sum(axis=1).max() == 128 and len(data["token_ids"]) > 10
    # Cut to fit, and counted: every line of more tokens than an NSP example's 128 - 3 holds.
    lines = [line for line in open(path, encoding="utf-8").read().split("\n") if line.strip()]
    lengths = tokenizer.tokenize(tf.constant(lines)).row_lengths().numpy()
    assert counters.truncated_sentences == (lengths > 125).sum() >= 1


def test_max_predictions_larger_than_the_sequence(tokenizer, corpus_path):
    with pytest.raises(ValueError, match="larger than the sequence"):
        pretraining_dataset(
            corpus_path, tokenizer, PairingConfig(sequence_length=32), MaskingConfig(max_predictions_per_seq=40)
        )


def test_vocabulary_without_mask(minilm_dir):
    with open(os.path.join(minilm_dir, "vocab.txt")) as f:
        vocabulary = [line.rstrip("\n") for line in f if line.strip() != "[MASK]"]
    with pytest.raises(ValueError, match="mask_token='\\[MASK\\]'"):
        BertTokenizer(vocabulary)


@pytest.mark.slow
def test_dataset_of_documents(tokenizer):
    documents = default_corpus_documents()[:30]
    sentences = tf.data.Dataset.from_generator(
        lambda: (np.array(d, dtype=object) for d in documents), output_signature=tf.TensorSpec([None], tf.string)
    )
    texts = tf.data.Dataset.from_tensor_slices(["\n".join(d) for d in documents])
    one, two = collect(pretraining_dataset(sentences, tokenizer)), collect(pretraining_dataset(texts, tokenizer))
    np.testing.assert_array_equal(one["token_ids"], two["token_ids"])
    with pytest.raises(ValueError, match="tf.string"):
        pretraining_dataset(tf.data.Dataset.range(3), tokenizer)
