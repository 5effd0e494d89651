"""A small random Hugging Face `BertForPreTraining` (PyTorch) and the same
weights loaded into our layers through the checkpoint loader: the oracle of
each layer's test."""

import numpy as np
import pytest

from keras_bert3.layers.bert_masked_lm_head import BertMaskedLMHead
from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.presets.huggingface_checkpoint import load_backbone_from_huggingface
from keras_bert3.presets.huggingface_checkpoint import load_huggingface_heads
from tests.hf_helpers import tiny_hf_config
from tests.reference import import_reference


@pytest.fixture(scope="module")
def hf_and_ours(tmp_path_factory):
    """(Hugging Face model in eval mode, our backbone, our masked-LM head)."""
    torch = import_reference("torch")
    transformers = import_reference("transformers")
    torch.manual_seed(0)
    config = tiny_hf_config(hidden_act="gelu", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    config._attn_implementation = "eager"  # Scores + additive mask, softmax, as written in the paper.
    model = transformers.BertForPreTraining(config).eval()
    with torch.no_grad():  # Random biases and LayerNorm weights too (they start at 0 and 1).
        for name, parameter in model.named_parameters():
            if "LayerNorm" in name or name.endswith(".bias"):
                parameter.add_(0.1 * torch.randn_like(parameter))
    directory = str(tmp_path_factory.mktemp("hf_bert"))
    model.save_pretrained(directory)
    backbone = load_backbone_from_huggingface(directory, BertBackbone, dropout=0.0)
    head = BertMaskedLMHead(backbone.embeddings.token_embedding, activation="gelu")
    head.build((None, None, config.hidden_size))
    assert load_huggingface_heads(directory, masked_lm_head=head) == ["masked_lm"]
    return model, backbone, head


def padded_batch(vocabulary_size: int = 120, rows: int = 3, length: int = 9, seed: int = 0) -> dict:
    """Token ids, segment ids (a second segment from the middle) and a padding
    mask of rows of different lengths, the first at full length."""
    rng = np.random.default_rng(seed)
    lengths = np.array([length] + list(rng.integers(2, length, rows - 1)))
    mask = (np.arange(length)[None, :] < lengths[:, None]).astype("int32")
    return {
        "token_ids": (rng.integers(1, vocabulary_size, (rows, length)) * mask).astype("int32"),
        "segment_ids": ((np.arange(length)[None, :] >= lengths[:, None] // 2) * mask).astype("int32"),
        "padding_mask": mask,
    }


def torch_tensor(array, dtype=None):
    torch = import_reference("torch")
    return torch.tensor(np.asarray(array), dtype=dtype)


def additive_mask(padding_mask):
    """Hugging Face's 4-D additive attention mask `(batch, 1, 1, seq)`."""
    torch = import_reference("torch")
    return (1.0 - torch_tensor(padding_mask, torch.float32))[:, None, None, :] * torch.finfo(torch.float32).min
