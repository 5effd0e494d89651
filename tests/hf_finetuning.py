"""The reference fine-tuning: Hugging Face `BertForSequenceClassification`,
AdamW with a linear warmup/decay schedule, dynamic padding (each batch padded
to its longest example), written as the plain PyTorch loop that HF's
`Trainer` runs. Shared by the parity test and bench/bench_finetuning.py."""

import math
import os
import time

import numpy as np

from tests.computed_once import computed_once
from tests.reference import import_reference


def finetune_hf(
    model_dir,
    train_texts,
    train_labels,
    test_texts,
    test_labels,
    *,
    num_classes,
    epochs,
    batch_size,
    learning_rate,
    sequence_length,
    warmup_ratio=0.1,
    weight_decay=0.01,
    seed=0,
    num_layers=None,
    bfloat16=False,
) -> dict:
    """Fine-tunes `model_dir` and returns test accuracy, timings and token counts.

    The optimizer matches `keras_bert3.bert_optimizer`: AdamW (betas 0.9/0.999,
    epsilon 1e-6, weight decay off biases and LayerNorm), gradients clipped
    at global norm 1.0, linear warmup over `warmup_ratio` of the steps then
    linear decay to zero. `bfloat16`: the forward pass under
    `torch.autocast("cpu", torch.bfloat16)` (what `Trainer(bf16=True)` does).
    """
    torch = import_reference("torch")
    transformers = import_reference("transformers")
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    tokenizer = transformers.BertTokenizerFast.from_pretrained(model_dir)
    layers = {} if num_layers is None else {"num_hidden_layers": num_layers}  # The first `num_layers` layers.
    model = transformers.BertForSequenceClassification.from_pretrained(model_dir, num_labels=num_classes, **layers)
    no_decay = [p for n, p in model.named_parameters() if n.endswith("bias") or "LayerNorm" in n]
    decay = [p for n, p in model.named_parameters() if not (n.endswith("bias") or "LayerNorm" in n)]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=learning_rate,
        betas=(0.9, 0.999),
        eps=1e-6,
    )
    steps_per_epoch = math.ceil(len(train_texts) / batch_size)
    total = epochs * steps_per_epoch
    schedule = transformers.get_linear_schedule_with_warmup(optimizer, int(warmup_ratio * total), total)
    labels = np.asarray(train_labels)
    real_tokens = 0
    model.train()
    for _ in range(epochs):
        order = rng.permutation(len(train_texts))
        for step in range(steps_per_epoch):
            index = order[step * batch_size : (step + 1) * batch_size]
            batch = tokenizer(
                [train_texts[i] for i in index],
                padding="longest",
                truncation=True,
                max_length=sequence_length,
                return_tensors="pt",
            )
            real_tokens += int(batch["attention_mask"].sum())
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bfloat16):
                loss = model(**batch, labels=torch.tensor(labels[index])).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
    train_seconds = time.perf_counter() - start
    model.eval()
    predictions = []
    with torch.no_grad():
        for i in range(0, len(test_texts), 64):
            batch = tokenizer(
                test_texts[i : i + 64],
                padding="longest",
                truncation=True,
                max_length=sequence_length,
                return_tensors="pt",
            )
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bfloat16):
                predictions.append(model(**batch).logits.argmax(-1).numpy())
    accuracy = float(np.mean(np.concatenate(predictions) == np.asarray(test_labels))) if predictions else 0.0
    return {
        "accuracy": accuracy,
        "train_seconds": train_seconds,
        "real_tokens": real_tokens,
        "examples": epochs * len(train_texts),
        "model": model,
        "tokenizer": tokenizer,
    }


def finetune_hf_once(model_dir, train_texts, train_labels, test_texts, test_labels, **budget) -> dict:
    """`finetune_hf`'s test accuracy, computed once per machine for the same
    inputs (`tests/computed_once.py`): the PyTorch reference does not depend on
    the backend, so the second pass of the suite reads the first pass's result.
    The key holds the data, the budget and the torch / transformers versions."""
    import json

    torch = import_reference("torch")
    transformers = import_reference("transformers")
    key = json.dumps(
        [
            "finetune_hf",
            os.path.abspath(model_dir),
            train_texts,
            list(map(int, train_labels)),
            test_texts,
            list(map(int, test_labels)),
            sorted(budget.items()),
            torch.__version__,
            transformers.__version__,
        ]
    )

    def compute() -> dict:
        result = finetune_hf(model_dir, train_texts, train_labels, test_texts, test_labels, **budget)
        return {"accuracy": result["accuracy"], "train_seconds": result["train_seconds"]}

    return computed_once(key, compute)
