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


def check_pooled_head_step_follows_hugging_face(ours, theirs, inputs: dict, targets) -> None:
    """One training step of `ours` (a task with `output_dense` on the pooled output) on `inputs` and `targets` moves
    the pooler's and the head's kernels by the gradients of the Hugging Face `BertForSequenceClassification`
    (or `BertForMultipleChoice`) `theirs` (its head set to ours, dropout off) for the same batch, within 1e-4 of
    their largest."""
    import keras
    import torch

    kernel, bias = (keras.ops.convert_to_numpy(w) for w in ours.output_dense.weights)
    with torch.no_grad():
        theirs.classifier.weight.copy_(torch.tensor(kernel.T))
        theirs.classifier.bias.copy_(torch.tensor(bias))
    theirs.train()
    theirs(
        input_ids=torch.tensor(inputs["token_ids"], dtype=torch.long),
        token_type_ids=torch.tensor(inputs["segment_ids"], dtype=torch.long),
        attention_mask=torch.tensor(inputs["padding_mask"], dtype=torch.long),
        labels=torch.tensor(targets),  # Float labels: MSE for one, else binary cross-entropy; ints: cross-entropy.
    ).loss.backward()
    expected = {
        "pooler": theirs.bert.pooler.dense.weight.grad.numpy().T,
        "head": theirs.classifier.weight.grad.numpy().T,
    }
    variables = {"pooler": ours.backbone.pooler.kernel, "head": ours.output_dense.kernel}
    before = {name: keras.ops.convert_to_numpy(v) for name, v in variables.items()}
    rate = 1000.0  # SGD: the step is the gradient times a rate that rounding the float32 weights does not blur.
    ours.compile(optimizer=keras.optimizers.SGD(learning_rate=rate), loss="auto", metrics="auto")
    ours.train_on_batch(inputs, targets)
    for name, variable in variables.items():
        step = (before[name] - keras.ops.convert_to_numpy(variable)) / rate
        scale = np.abs(expected[name]).max()
        assert scale > 0 and max_abs_diff(step, expected[name]) < 1e-4 * scale, name
