"""Hugging Face `transformers` on PyTorch, timed as `bench/accelerator.py`
times keras_bert3, for its `--quick` comparison on the same device.

Rows (in this one process; each prints a `RESULT {json}` line):
- `hf-pretrain-{size}-{length}`: `BertForPreTraining` (SDPA attention) under
  `torch.compile` (eager on a CPU), bfloat16 autocast (float32 on a CPU) and fused AdamW (lr 1e-4, weight decay
  0.01), on random batches with `predictions` masked positions per
  sequence and NSP labels. Hugging Face's MLM head scores every position; MFU
  counts the same model FLOPs as ours (`bench/model_flops.py`: the head at the
  masked positions only), so it credits the work both must do.
- `hf-finetune-minilm`: `BertForSequenceClassification` on the
  all-MiniLM-L6-v2 checkpoint, a plain training loop with the fast
  tokenizer (each batch padded to its longest text, at most 128 tokens),
  bfloat16 autocast (float32 on a CPU) and fused AdamW (lr 5e-5), batch 32, three epochs
  (`--finetune-epochs`) on the texts given in `--texts` (a JSON file of `{"texts": [...], "labels": [...]}`):
  the first epoch's time and the last's sequences/s.

Command (from the repository root; `bench/accelerator.py --quick` runs it):

    python bench/accelerator_huggingface.py --rows hf-pretrain-large-128 hf-finetune-minilm --texts texts.json
"""

import argparse
import json
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from bench.model_flops import pretraining_flops_per_step  # noqa: E402

SIZES = {"tiny": (2, 128, 2), "base": (12, 768, 12), "large": (24, 1024, 16)}  # layers, hidden, heads
DEVICE = "cuda"  # "cpu" where PyTorch sees no GPU (a check that the bench runs, no figures).


def autocast(torch):
    """bfloat16 autocast on a GPU. On a CPU, where these rows only check that
    the bench runs, float32: a CPU without bfloat16 instructions (AMD EPYC
    Zen 3) emulates bfloat16 products, many times slower."""
    return torch.autocast(DEVICE, dtype=torch.bfloat16, enabled=DEVICE == "cuda")


def compiled(torch, model):
    """`torch.compile(model)` on a GPU. On a CPU, where these rows only check
    that the bench runs, the model itself: compiling there builds C++ kernels
    with the system's compiler, a minute of CPU on a new machine for figures
    no one reads."""
    return torch.compile(model) if DEVICE == "cuda" else model


def synchronized_seconds(torch, start: float) -> float:
    if DEVICE == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def peak_memory_gib(torch) -> float:
    if DEVICE == "cuda":
        return torch.cuda.max_memory_allocated() / 2**30
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def pretraining_config(size: str):
    """Hugging Face's `BertConfig` of a standard size (SDPA attention, the uncased vocabulary)."""
    import transformers

    layers, hidden, heads = SIZES[size]
    return transformers.BertConfig(
        vocab_size=30522,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=4 * hidden,
        max_position_embeddings=512,
        attn_implementation="sdpa",
    )


def run_pretrain(size: str, length: int, batch_size: int, predictions: int, steps: int, epochs: int) -> dict:
    import torch
    import transformers

    layers, hidden, _ = SIZES[size]
    torch.manual_seed(0)
    model = transformers.BertForPreTraining(pretraining_config(size)).to(DEVICE).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01, fused=DEVICE == "cuda")
    step = compiled(torch, model)
    generator = torch.Generator(device=DEVICE).manual_seed(0)

    def batch():
        ids = torch.randint(1000, 30522, (batch_size, length), device=DEVICE, generator=generator)
        labels = torch.full_like(ids, -100)
        positions = torch.rand(batch_size, length, device=DEVICE, generator=generator).argsort(-1)[:, :predictions]
        labels.scatter_(1, positions, ids.gather(1, positions))
        return dict(
            input_ids=ids,
            token_type_ids=torch.zeros_like(ids),
            attention_mask=torch.ones_like(ids),
            labels=labels,
            next_sentence_label=torch.randint(0, 2, (batch_size,), device=DEVICE, generator=generator),
        )

    batches = [batch() for _ in range(8)]
    seconds, losses = [], []
    for epoch in range(epochs):
        start = time.perf_counter()
        for i in range(steps):
            with autocast(torch):
                loss = step(**batches[i % len(batches)]).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        losses.append(float(loss))
        seconds.append(synchronized_seconds(torch, start))
        print(f"    hf {size}: epoch {epoch} {seconds[-1]:.1f} s, loss {losses[-1]:.3f}", file=sys.stderr, flush=True)
    timed = seconds[1:]
    flops = pretraining_flops_per_step(
        layers=layers,
        hidden=hidden,
        sequence_length=length,
        batch_size=batch_size,
        predictions=predictions,
        vocabulary_size=30522,
    )
    return {
        "sequences_per_s": batch_size * steps / min(timed),
        "sequences_per_s_worst": batch_size * steps / max(timed),
        "tflops": flops * steps / min(timed) / 1e12,
        "first_epoch_s": seconds[0],
        "loss_first_epoch": losses[0],
        "loss_last_epoch": losses[-1],
        "peak_memory_gib": peak_memory_gib(torch),
    }


def run_finetune(model_dir: str, texts_file: str, epochs: int = 3, batch_size: int = 32) -> dict:
    import numpy as np
    import torch
    import transformers

    with open(texts_file, encoding="utf-8") as f:
        data = json.load(f)
    texts, labels = data["texts"], np.asarray(data["labels"])
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    torch.manual_seed(0)
    model = (
        transformers.BertForSequenceClassification.from_pretrained(
            model_dir, num_labels=int(labels.max()) + 1, attn_implementation="sdpa"
        )
        .to(DEVICE)
        .train()
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.01, fused=DEVICE == "cuda")
    rng = np.random.default_rng(0)
    seconds = []
    for epoch in range(epochs):
        start = time.perf_counter()
        order = rng.permutation(len(texts))
        for i in range(0, len(order), batch_size):
            rows = order[i : i + batch_size]
            inputs = tokenizer(
                [texts[j] for j in rows], padding="longest", truncation=True, max_length=128, return_tensors="pt"
            ).to(DEVICE)
            with autocast(torch):
                loss = model(**inputs, labels=torch.as_tensor(labels[rows], device=DEVICE)).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        seconds.append(synchronized_seconds(torch, start))
        print(
            f"    hf finetune: epoch {epoch} {seconds[-1]:.1f} s, loss {float(loss):.3f}", file=sys.stderr, flush=True
        )
    return {
        "sequences_per_s": len(texts) / seconds[-1],
        "first_epoch_s": seconds[0],
        "steady_epoch_s": seconds[-1],
        "peak_memory_gib": peak_memory_gib(torch),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", nargs="+", required=True)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--timed-epochs", type=int, default=2)
    parser.add_argument("--minilm", help="the all-MiniLM-L6-v2 checkpoint's folder")
    parser.add_argument("--texts", help="JSON {texts, labels} for hf-finetune-minilm")
    parser.add_argument("--finetune-epochs", type=int, default=3, help="hf-finetune-minilm's epochs; the last is timed")
    args = parser.parse_args()
    import torch

    global DEVICE
    DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
    name = torch.cuda.get_device_name(0) if DEVICE == "cuda" else f"CPU ({os.cpu_count()} cores)"
    print(
        "DEVICE "
        + json.dumps(
            {"backend": "torch", "accelerator": "gpu" if DEVICE == "cuda" else "cpu", "device": name, "count": 1}
        ),
        flush=True,
    )
    from bench.accelerator import BATCH_SIZES, PREDICTIONS  # noqa: E402  (no Keras import)

    for row in args.rows:
        start = time.perf_counter()
        parts = row.split("-")
        try:
            if parts[1] == "pretrain":
                size, length = parts[2], int(parts[3])
                settings = {
                    "kind": "pretrain",
                    "size": size,
                    "sequence_length": length,
                    "batch_size": BATCH_SIZES.get((size, length), 8),
                    "predictions": PREDICTIONS.get(length, 10),
                }
                result = run_pretrain(
                    size, length, settings["batch_size"], settings["predictions"], args.steps, 1 + args.timed_epochs
                )
            else:
                settings = {"kind": "finetune", "model": parts[2]}
                result = run_finetune(args.minilm, args.texts, epochs=args.finetune_epochs)
        except Exception as error:  # A row's failure is reported, not fatal.
            settings, result = {}, {"error": f"{type(error).__name__}: {str(error)[:300]}"}
        result["wall_s"] = time.perf_counter() - start
        print(
            "RESULT "
            + json.dumps(
                {
                    "row": row,
                    "backend": "torch",
                    "precision": "bf16 autocast" if DEVICE == "cuda" else "float32",
                    **settings,
                    **result,
                }
            ),
            flush=True,
        )
        if DEVICE == "cuda":
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
