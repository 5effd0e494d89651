"""How close a fine-tuning step is to the cost of its matrix products alone:
keras_bert3 (TensorFlow) and Hugging Face (PyTorch), all-MiniLM-L6-v2,
float32 and bfloat16, side by side on the same shapes.

For each framework and precision it measures
- the training step of the classifier (forward, backward, AdamW with
  clipping) on a batch of `--batch` random texts of `--length` tokens;
- the same step's matrix products replayed alone: every dense layer's
  forward product and its two backward products (input and weight
  gradients), and the attention's batched products (scores, context and
  their gradients), for the full 6-layer encoder, in that framework at that
  precision.

The replay is a floor for any implementation that computes every product of
the model on these kernels: what is left of a step above it is element-wise
work (dropout, GELU, LayerNorm, softmax, AdamW) and dispatch. It tells what
a speed target asks for: a step twice as fast as Hugging Face's must fit
under half its time, matrix products included. (keras_bert3's classifier
computes fewer products than the replay: its last block runs the [CLS] row
alone; the replay counts the full encoder for both.)

    python bench/bench_matmul_floor.py

Each framework runs in its own process, one after the other (2 cores here).
"""

import argparse
import json
import os
import subprocess
import sys
import time

HIDDEN, INTERMEDIATE, HEADS, LAYERS = 384, 1536, 12, 6  # all-MiniLM-L6-v2


def step_products(batch: int, length: int) -> list[tuple[tuple, tuple]]:
    """(a shape, b shape) of every matrix product of one training step."""
    tokens = batch * length
    products = []
    for _ in range(LAYERS):
        for fan_in, fan_out in ((HIDDEN, 3 * HIDDEN), (HIDDEN, HIDDEN), (HIDDEN, INTERMEDIATE), (INTERMEDIATE, HIDDEN)):
            products.append(((tokens, fan_in), (fan_in, fan_out)))  # forward
            products.append(((tokens, fan_out), (fan_out, fan_in)))  # input gradient
            products.append(((fan_in, tokens), (tokens, fan_out)))  # weight gradient
        head_dim, groups = HIDDEN // HEADS, batch * HEADS
        for _ in range(3):  # scores and context, forward and both gradients
            products.append(((groups, length, head_dim), (groups, head_dim, length)))
            products.append(((groups, length, length), (groups, length, head_dim)))
    return products


def flops(products) -> float:
    total = 0.0
    for a, b in products:
        groups = a[0] if len(a) == 3 else 1
        total += 2 * groups * a[-2] * a[-1] * b[-1]
    return total


def best_of(fn, repeats: int) -> float:
    fn()
    fn()  # Warm-up: kernels, caches, tracing.
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def run_tensorflow(args, precision: str) -> dict:
    import keras
    import numpy as np
    import tensorflow as tf

    from bench_finetuning import minilm_dir
    from keras_bert3.models.bert_classifier import BertClassifier

    dtype = tf.float32 if precision == "float32" else tf.bfloat16
    operands = [
        (tf.random.normal(a, dtype=dtype), tf.random.normal(b, dtype=dtype))
        for a, b in step_products(args.batch, args.length)
    ]

    @tf.function
    def products():
        return [tf.matmul(a, b) for a, b in operands]

    matmuls = best_of(products, args.repeats)

    keras.utils.set_random_seed(0)
    kwargs = {} if precision == "float32" else {"dtype": "mixed_bfloat16"}
    classifier = BertClassifier.from_preset(minilm_dir(), num_classes=6, **kwargs)
    rng = np.random.default_rng(0)
    x = {
        "token_ids": rng.integers(1000, 20000, (args.batch, args.length)).astype("int32"),
        "segment_ids": np.zeros((args.batch, args.length), "int32"),
        "padding_mask": np.ones((args.batch, args.length), "int32"),
    }
    y = rng.integers(0, 6, (args.batch,))
    step = best_of(lambda: classifier.train_on_batch(x, y), args.repeats)
    return {"step": step, "matmuls": matmuls}


def run_torch(args, precision: str) -> dict:
    import numpy as np
    import torch
    import transformers

    from bench_finetuning import minilm_dir

    torch.manual_seed(0)
    dtype = torch.float32 if precision == "float32" else torch.bfloat16
    operands = [
        (torch.randn(a, dtype=dtype), torch.randn(b, dtype=dtype)) for a, b in step_products(args.batch, args.length)
    ]

    def products():
        with torch.no_grad():
            for a, b in operands:
                torch.matmul(a, b)

    matmuls = best_of(products, args.repeats)

    model = transformers.BertForSequenceClassification.from_pretrained(minilm_dir(), num_labels=6)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, eps=1e-6, weight_decay=0.01)
    rng = np.random.default_rng(0)
    ids = torch.tensor(rng.integers(1000, 20000, (args.batch, args.length)))
    labels = torch.tensor(rng.integers(0, 6, (args.batch,)))

    def step():
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision != "float32"):
            loss = model(input_ids=ids, attention_mask=torch.ones_like(ids), labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()

    return {"step": best_of(step, args.repeats), "matmuls": matmuls}


ROWS = {
    "keras_bert3 float32": lambda args: run_tensorflow(args, "float32"),
    "keras_bert3 bfloat16": lambda args: run_tensorflow(args, "bfloat16"),
    "Hugging Face float32": lambda args: run_torch(args, "float32"),
    "Hugging Face bfloat16": lambda args: run_torch(args, "bfloat16"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=112, help="tokens per text (the bench's texts: 90-128)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", choices=sorted(ROWS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.only:
        print("RESULT " + json.dumps(ROWS[args.only](args)), flush=True)
        return

    work = flops(step_products(args.batch, args.length))
    print(
        f"{os.cpu_count()} CPUs; one step: {args.batch} x {args.length} tokens, matrix products {work / 1e9:.0f} GFLOP"
    )
    results = {}
    for name in ROWS:
        env = dict(
            os.environ,
            KERAS_BACKEND="tensorflow",
            TF_CPP_MIN_LOG_LEVEL="3",
            PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.abspath(__file__)), os.environ.get("PYTHONPATH", "")]),
        )
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                f"--batch={args.batch}",
                f"--length={args.length}",
                f"--repeats={args.repeats}",
                "--only",
                name,
            ],
            env=env,
            capture_output=True,
            text=True,
        )
        lines = [line for line in out.stdout.splitlines() if line.startswith("RESULT ")]
        if not lines:
            print(f"{name}: failed\n{out.stderr[-3000:]}", flush=True)
            continue
        results[name] = json.loads(lines[-1][len("RESULT ") :])
    hf = results.get("Hugging Face float32")
    print(
        "\n| run | step (s) | its matrix products alone (s) | GFLOP/s in them | share of the step | step vs HF float32 |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, r in results.items():
        vs = f"{hf['step'] / r['step']:.2f}x" if hf else "n/a"
        print(
            f"| {name} | {r['step']:.3f} | {r['matmuls']:.3f} | {work / r['matmuls'] / 1e9:.0f} | "
            f"{r['matmuls'] / r['step']:.0%} | {vs} |"
        )
    if hf:
        print(f"\nTwice Hugging Face's float32 speed needs a step of {hf['step'] / 2:.3f} s.")


if __name__ == "__main__":
    main()
