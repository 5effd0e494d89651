"""BertTokenizer.from_preset / save_to_preset over the three preset formats."""

import json
import os
import shutil

import numpy as np
import pytest
import keras_hub

from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
from tests.real_sentences import real_sentences
from tests.reference import import_reference

pytestmark = pytest.mark.backend_free  # TensorFlow and tf-text only: no Keras backend reaches it.


def test_huggingface_directory_gives_huggingface_ids(minilm_dir):
    transformers = import_reference("transformers")
    tokenizer = BertTokenizer.from_preset(minilm_dir)
    assert tokenizer.lowercase is True
    texts = real_sentences(20) + ["Ärger über Straße… ΣΑΣ 東京"]
    expected = transformers.BertTokenizerFast.from_pretrained(minilm_dir)(texts, add_special_tokens=False)["input_ids"]
    assert tokenizer(texts).to_list() == expected


def test_casing_is_read_from_tokenizer_config(tmp_path, minilm_dir):
    shutil.copy(os.path.join(minilm_dir, "config.json"), tmp_path)
    shutil.copy(os.path.join(minilm_dir, "vocab.txt"), tmp_path)
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": False}))
    assert BertTokenizer.from_preset(str(tmp_path)).lowercase is False


def test_save_then_load_gives_identical_ids(tmp_path, minilm_dir):
    tokenizer = BertTokenizer.from_preset(minilm_dir)
    tokenizer.save_to_preset(str(tmp_path))
    restored = BertTokenizer.from_preset(str(tmp_path))
    assert restored.get_config() == tokenizer.get_config()
    texts = real_sentences(10)
    assert restored(texts).to_list() == tokenizer(texts).to_list()


def test_keras_hub_preset_vocabulary_and_casing(tmp_path, minilm_dir):
    with open(os.path.join(minilm_dir, "vocab.txt"), encoding="utf-8") as f:
        vocabulary = f.read().splitlines()
    keras_hub.models.BertTokenizer(vocabulary=vocabulary, lowercase=True).save_to_preset(str(tmp_path))
    ours = BertTokenizer.from_preset(str(tmp_path))
    assert ours.get_vocabulary() == vocabulary
    assert ours.lowercase is True
    texts = real_sentences(10)
    np.testing.assert_array_equal(
        ours(texts).flat_values.numpy(), BertTokenizer.from_preset(minilm_dir)(texts).flat_values.numpy()
    )


def test_missing_vocabulary_is_named(tmp_path, minilm_dir):
    shutil.copy(os.path.join(minilm_dir, "config.json"), tmp_path)
    with pytest.raises(FileNotFoundError, match="vocab.txt"):
        BertTokenizer.from_preset(str(tmp_path))
