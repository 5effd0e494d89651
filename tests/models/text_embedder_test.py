"""TextEmbedder against sentence-transformers and Hugging Face hidden states."""

import numpy as np
import pytest

from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.text_embedder import TextEmbedder
from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
from tests.hf_helpers import hf_outputs
from tests.hf_helpers import max_abs_diff
from tests.real_sentences import real_sentences
from tests.reference import import_reference


@pytest.fixture(scope="module")
def minilm_embedder_parts(minilm_dir):
    return BertBackbone.from_preset(minilm_dir), BertTokenizer.from_preset(minilm_dir)


@pytest.mark.slow
def test_mean_pooling_equals_sentence_transformers(minilm_dir, minilm_embedder_parts):
    # all-MiniLM-L6-v2 is a sentence-transformers model: mean pooling, then L2 norm.
    sentence_transformers = import_reference("sentence_transformers")
    texts = real_sentences(10) + ["", "Straße, Ünïcödé… and 東京"]
    expected = sentence_transformers.SentenceTransformer(minilm_dir, device="cpu").encode(texts)
    backbone, tokenizer = minilm_embedder_parts
    embedder = TextEmbedder(backbone, tokenizer, output="mean", normalize=True, sequence_length=256, batch_size=4)
    assert max_abs_diff(embedder.embed(texts), expected) < 1e-5


def test_token_vectors_of_the_last_four_layers_equal_transformers(minilm_dir, minilm_embedder_parts):
    transformers = import_reference("transformers")
    texts = real_sentences(4)
    backbone, tokenizer = minilm_embedder_parts
    embedder = TextEmbedder(backbone, tokenizer, output="tokens", hidden_layers=(-4, -3, -2, -1))
    ours = embedder.embed(texts)
    reference = transformers.BertModel.from_pretrained(minilm_dir)
    hf_tokenizer = transformers.BertTokenizerFast.from_pretrained(minilm_dir)
    for text, vectors in zip(texts, ours):
        encoded = hf_tokenizer([text], return_tensors="np")
        inputs = {
            "token_ids": encoded["input_ids"],
            "segment_ids": encoded["token_type_ids"],
            "padding_mask": encoded["attention_mask"],
        }
        states = hf_outputs(reference, inputs, output_hidden_states=True).hidden_states
        expected = np.concatenate([s[0].numpy() for s in states[-4:]], axis=-1)
        assert vectors.shape == expected.shape == (inputs["token_ids"].shape[1], 4 * 384)
        assert max_abs_diff(vectors, expected) < 1e-4


def test_pooled_output_equals_transformers_pooler(minilm_dir, minilm_embedder_parts):
    transformers = import_reference("transformers")
    texts = real_sentences(5)
    backbone, tokenizer = minilm_embedder_parts
    ours = TextEmbedder(backbone, tokenizer, output="pooled").embed(texts)
    encoded = transformers.BertTokenizerFast.from_pretrained(minilm_dir)(texts, padding=True, return_tensors="np")
    theirs = hf_outputs(
        transformers.BertModel.from_pretrained(minilm_dir),
        {
            "token_ids": encoded["input_ids"],
            "segment_ids": encoded["token_type_ids"],
            "padding_mask": encoded["attention_mask"],
        },
    )
    assert max_abs_diff(ours, theirs.pooler_output) < 1e-4


@pytest.mark.backend_free
def test_mismatched_tokenizer_and_backbone_are_refused(minilm_embedder_parts):
    backbone, _ = minilm_embedder_parts
    small = BertTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"])
    with pytest.raises(ValueError, match="7 tokens but the backbone's token embedding has 30,522 rows"):
        TextEmbedder(backbone, small)


@pytest.mark.backend_free
def test_bad_options_are_named(minilm_embedder_parts):
    backbone, tokenizer = minilm_embedder_parts
    with pytest.raises(ValueError, match="output='max'"):
        TextEmbedder(backbone, tokenizer, output="max")
    with pytest.raises(ValueError, match="hidden states 0..6"):
        TextEmbedder(backbone, tokenizer, output="cls", hidden_layers=(9,))
    with pytest.raises(ValueError, match="exceeds the backbone's 512 positions"):
        TextEmbedder(backbone, tokenizer, sequence_length=1024)
