"""Running Hugging Face `transformers` (PyTorch) on the same inputs as ours."""

import os
import shutil

import numpy as np

from tests.reference import import_reference


def hf_inputs(checkpoint_dir: str, texts: list[str], pairs: list[str] | None = None) -> dict:
    """Token ids from Hugging Face's own tokenizer, padded to the longest."""
    transformers = import_reference("transformers")
    tokenizer = transformers.BertTokenizerFast.from_pretrained(checkpoint_dir)
    encoded = tokenizer(texts, pairs, padding=True, return_tensors="np")
    return {
        "token_ids": encoded["input_ids"].astype("int32"),
        "segment_ids": encoded["token_type_ids"].astype("int32"),
        "padding_mask": encoded["attention_mask"].astype("int32"),
    }


def hf_outputs(model, inputs: dict, **kwargs):
    """Runs a `transformers` model in eval mode on our input dict; `kwargs`
    go to the model (e.g. `output_hidden_states=True`)."""
    torch = import_reference("torch")
    model.eval()
    with torch.no_grad():
        return model(
            input_ids=torch.tensor(inputs["token_ids"], dtype=torch.long),
            token_type_ids=torch.tensor(inputs["segment_ids"], dtype=torch.long),
            attention_mask=torch.tensor(inputs["padding_mask"], dtype=torch.long),
            **kwargs,
        )


def max_abs_diff(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))


def tiny_hf_config(**overrides):
    """A small random `BertConfig` (the architecture, not a checkpoint)."""
    transformers = import_reference("transformers")
    config = dict(
        vocab_size=120,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=40,
        type_vocab_size=2,
    )
    config.update(overrides)
    return transformers.BertConfig(**config)


def save_hf_task(model, minilm_dir: str, directory) -> str:
    """Saves a `transformers` task model built on MiniLM as Hugging Face does
    (config.json with its architecture, model.safetensors), with MiniLM's
    tokenizer files beside it; returns the directory."""
    model.save_pretrained(directory)
    for name in ("vocab.txt", "tokenizer_config.json", "special_tokens_map.json", "tokenizer.json"):
        if os.path.isfile(os.path.join(minilm_dir, name)):
            shutil.copy(os.path.join(minilm_dir, name), directory)
    return str(directory)


def hf_first_pieces(encoding, index, num_words) -> list[int]:
    """Hugging Face's alignment: the position of each word's first token, -1 if none."""
    first = {}
    for position, word in enumerate(encoding.word_ids(index)):
        if word is not None:
            first.setdefault(word, position)
    return [first.get(word, -1) for word in range(num_words)]
