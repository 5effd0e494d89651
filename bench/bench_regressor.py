"""Fine-tuning a regressor on real text: `keras-bert3 finetune --task regressor` against Hugging Face's `Trainer`,
each in a process of its own and timed whole (imports, loading the checkpoint, tokenizing, every step).

The same for both: all-MiniLM-L6-v2; the share of a standard-library docstring sentence's words that are code
(`keras_bert3_demo.docstring_code_tags()`: the first `--train-size` training sentences, the test sentences);
`--epochs`, batch 32, peak `--learning-rate` after a linear warmup over 10% of the steps then linear decay,
AdamW (weight decay 0.01, epsilon 1e-6), gradients clipped at 1.0, at most `--sequence-length` tokens.

- `ours`: the command a user runs, on a CSV file, then `keras-bert3 evaluate` on the test file (TensorFlow).
- `trainer`: `BertForSequenceClassification(num_labels=1)` (Hugging Face's regression: mean squared error) under
  `Trainer`, batches padded to their longest text (`DataCollatorWithPadding`), then `Trainer.predict`. Needs
  `accelerate` beside transformers (`pip install accelerate`: `Trainer` imports it).

Reported: training examples a second over the whole process, and the test set's mean squared error and Pearson
correlation, against predicting the training mean. Rows alternate (A B A B) with `--repeats 2`:

    python bench/bench_regressor.py --train-size 1024 --epochs 2 --repeats 2
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def minilm_dir() -> str:
    sys.path.insert(0, REPO)
    from tests.reference import minilm_checkpoint_dir

    return minilm_checkpoint_dir()


def write_data(args, folder: str) -> dict:
    """The train CSV and the test JSON lines; the targets, for scoring."""
    from keras_bert3_demo.docstring_code_tags import docstring_code_tags
    from keras_bert3_demo.labelled_sets import write_csv

    tags = docstring_code_tags()
    share = lambda sentence_tags: sum(t > 0 for t in sentence_tags) / len(sentence_tags)  # noqa: E731
    train = [
        {"sentence": " ".join(words), "code_share": share(t)}
        for words, t in zip(tags["train_words"][: args.train_size], tags["train_tags"][: args.train_size])
    ]
    test = [
        {"sentence": " ".join(words), "code_share": share(t)} for words, t in zip(tags["test_words"], tags["test_tags"])
    ]
    write_csv(os.path.join(folder, "train.csv"), train)
    with open(os.path.join(folder, "test.jsonl"), "w", encoding="utf-8") as f:
        f.writelines(json.dumps(row) + "\n" for row in test)
    return {"train": train, "test": test}


def run_ours(args, folder: str, minilm: str) -> dict:
    output = os.path.join(folder, f"ours-{time.monotonic_ns()}")
    columns = ["--text-column", "sentence", "--label-column", "code_share"]
    command = [sys.executable, "-m", "keras_bert3"]
    start = time.perf_counter()
    subprocess.run(
        [*command, "finetune", "--task", "regressor", "--preset", minilm, "--train", os.path.join(folder, "train.csv"),
         *columns, "--output", output, "--epochs", str(args.epochs), "--batch-size", "32",
         "--learning-rate", str(args.learning_rate), "--sequence-length", str(args.sequence_length), "--verbose", "0"],
        check=True, capture_output=True, env=dict(os.environ, KERAS_BACKEND="tensorflow"),
    )  # fmt: skip
    seconds = time.perf_counter() - start
    report = os.path.join(folder, "ours-report.json")
    subprocess.run(
        [*command, "evaluate", "--model", output, "--data", os.path.join(folder, "test.jsonl"), *columns,
         "--report", report],
        check=True, capture_output=True, env=dict(os.environ, KERAS_BACKEND="tensorflow"),
    )  # fmt: skip
    with open(report, encoding="utf-8") as f:
        scores = json.load(f)
    return {"seconds": seconds, "mean_squared_error": scores["mean_squared_error"], "pearson": scores["pearson"]}


def run_trainer(args, folder: str, minilm: str) -> dict:
    """In this process (started by `--only trainer`): `Trainer` from its imports to its test predictions."""
    start = time.perf_counter()
    import numpy as np
    import torch
    import transformers

    with open(os.path.join(folder, "data.json"), encoding="utf-8") as f:
        data = json.load(f)
    tokenizer = transformers.BertTokenizerFast.from_pretrained(minilm)

    def encoded(rows):
        texts = tokenizer([row["sentence"] for row in rows], truncation=True, max_length=args.sequence_length)
        return [
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": types, "labels": float(row["code_share"])}
            for ids, mask, types, row in zip(texts["input_ids"], texts["attention_mask"], texts["token_type_ids"], rows)
        ]

    torch.manual_seed(0)
    model = transformers.BertForSequenceClassification.from_pretrained(minilm, num_labels=1)
    training = transformers.TrainingArguments(
        output_dir=os.path.join(folder, "trainer"),
        num_train_epochs=args.epochs,
        per_device_train_batch_size=32,
        per_device_eval_batch_size=64,
        learning_rate=args.learning_rate,
        warmup_steps=0.1,  # transformers 5: a float below 1 is a share of the steps.
        weight_decay=0.01,
        adam_epsilon=1e-6,
        max_grad_norm=1.0,
        lr_scheduler_type="linear",
        save_strategy="no",
        logging_strategy="no",
        report_to=[],
        seed=0,
        use_cpu=True,
        disable_tqdm=True,
    )
    collator = transformers.DataCollatorWithPadding(tokenizer)
    trainer = transformers.Trainer(
        model=model, args=training, train_dataset=encoded(data["train"]), data_collator=collator
    )
    trainer.train()
    seconds = time.perf_counter() - start
    predicted = trainer.predict(encoded(data["test"])).predictions.reshape(-1)
    truth = np.array([row["code_share"] for row in data["test"]])
    return {
        "seconds": seconds,
        "mean_squared_error": float(np.mean((predicted - truth) ** 2)),
        "pearson": float(np.corrcoef(predicted, truth)[0, 1]),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train-size", type=int, default=1024)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--sequence-length", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=1, help="Each row this many times, in turn (A B A B).")
    parser.add_argument("--only", choices=["trainer"], help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    args = parser.parse_args()
    minilm = minilm_dir()
    if args.only:
        print(json.dumps(run_trainer(args, args.folder, minilm)))
        return
    import numpy as np

    with tempfile.TemporaryDirectory() as folder:
        data = write_data(args, folder)
        with open(os.path.join(folder, "data.json"), "w", encoding="utf-8") as f:
            json.dump(data, f)
        baseline = np.mean([row["code_share"] for row in data["train"]])
        truth = np.array([row["code_share"] for row in data["test"]])
        print(f"{len(data['train'])} training sentences, {len(data['test'])} test; predicting the training mean: "
              f"mean squared error {np.mean((baseline - truth) ** 2):.5f}")  # fmt: skip
        own = [sys.executable, os.path.abspath(__file__), "--only", "trainer", "--folder", folder]
        own += [
            f"--{name.replace('_', '-')}={getattr(args, name)}"
            for name in ("epochs", "learning_rate", "sequence_length")
        ]
        for _ in range(args.repeats):
            for row in ("ours", "trainer"):
                load = os.getloadavg()[0]
                if row == "ours":
                    result = run_ours(args, folder, minilm)
                else:
                    done = subprocess.run(own, check=True, capture_output=True, text=True)
                    result = json.loads(done.stdout.strip().splitlines()[-1])
                rate = args.epochs * len(data["train"]) / result["seconds"]
                print(f"{row:8} {result['seconds']:7.1f} s  {rate:6.1f} examples/s  mean squared error "
                      f"{result['mean_squared_error']:.5f}  Pearson {result['pearson']:.4f}  (load {load:.2f})", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
