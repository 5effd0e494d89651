"""Shared fixtures: the real MiniLM vocabulary and Hugging Face oracles."""

import os

import pytest

from tests.reference import import_reference


@pytest.fixture(scope="session")
def minilm_vocab_path(minilm_dir) -> str:
    return os.path.join(minilm_dir, "vocab.txt")


def hf_bert_tokenizer(vocab_path: str, lowercase: bool):
    """The oracle. transformers 5 takes the vocab.txt path as `vocab=`; it
    silently ignores the older `vocab_file=` (giving a 5-token vocabulary)."""
    transformers = import_reference("transformers")
    tokenizer = transformers.BertTokenizerFast(vocab=vocab_path, do_lower_case=lowercase)
    with open(vocab_path, encoding="utf-8") as f:
        assert len(tokenizer.get_vocab()) == len(set(line.rstrip("\r\n") for line in f))
    return tokenizer


@pytest.fixture(scope="session")
def hf_uncased(minilm_vocab_path):
    return hf_bert_tokenizer(minilm_vocab_path, lowercase=True)


@pytest.fixture(scope="session")
def uncased_tokenizer(minilm_vocab_path):
    from keras_bert3.tokenizers import BertTokenizer

    return BertTokenizer(minilm_vocab_path)
