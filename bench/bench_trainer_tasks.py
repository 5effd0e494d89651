"""Fine-tuning the regressor, the multi-label classifier and the multiple choice on real text: `keras-bert3 finetune
--task TASK` against Hugging Face's `Trainer`, each in a process of its own and timed whole (imports, loading the
checkpoint, tokenizing, every step).

The same for both: all-MiniLM-L6-v2; `--epochs`, batch 32, peak `--learning-rate` after a linear warmup over 10% of
the steps then linear decay, AdamW (weight decay 0.01, epsilon 1e-6), gradients clipped at 1.0, at most
`--sequence-length` tokens; the first `--train-size` training examples, then every test example. The data:

- `regressor`: the share of a standard-library docstring sentence's words that are code
  (`keras_bert3_demo.docstring_code_tags()`); mean squared error and Pearson's correlation, against predicting the
  training mean. Hugging Face: `BertForSequenceClassification(num_labels=1)`.
- `multi-label-classifier`: docstring sentences and their topics, every other text two sentences of different
  topics with both (tests/multi_topic_texts.py); micro F1 at the threshold 0.5, against the best constant labels.
  Hugging Face: `BertForSequenceClassification(problem_type="multi_label_classification")`.
- `multiple-choice`: questions on docstrings, four answers to choose from (tests/choice_questions.py); accuracy,
  against chance. Hugging Face: `BertForMultipleChoice`, as `run_swag.py` pads.

`ours` is the command a user runs, on a CSV file, then `keras-bert3 evaluate` on the test file (TensorFlow);
`trainer` is `Trainer` then `Trainer.predict`, batches padded to their longest example. Needs `accelerate` beside
transformers (`pip install accelerate`: `Trainer` imports it). Rows alternate (A B A B) with `--repeats 2`:

    python bench/bench_trainer_tasks.py --task multiple-choice --train-size 512 --epochs 2 --repeats 2
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)


def minilm_dir() -> str:
    from tests.reference import minilm_checkpoint_dir

    return minilm_checkpoint_dir()


def examples(task: str, split: str, count: int) -> list[dict]:
    """Rows of the task's file: `sentence` and `target` (a score, a list of topics), or SWAG's columns."""
    if task == "regressor":
        from keras_bert3_demo.docstring_code_tags import docstring_code_tags

        tags = docstring_code_tags()
        pairs = list(zip(tags[f"{split}_words"], tags[f"{split}_tags"]))[:count]
        return [{"sentence": " ".join(w), "target": sum(t > 0 for t in ts) / len(ts)} for w, ts in pairs]
    if task == "multi-label-classifier":
        from tests.multi_topic_texts import multi_topic_texts

        return [{"sentence": t, "target": n} for t, n in zip(*multi_topic_texts(split, count))]
    from tests.choice_questions import choice_questions

    return [
        {"sent1": e["context"], "sent2": e["question"], **{f"ending{i}": c for i, c in enumerate(e["choices"])}}
        | {"label": e["label"]}
        for e in choice_questions(split, count)
    ]


def write_data(args, folder: str) -> dict:
    """The train CSV and the test JSON lines (their targets, for scoring)."""
    from keras_bert3_demo.labelled_sets import write_csv

    data = {"train": examples(args.task, "train", args.train_size), "test": examples(args.task, "test", 10**6)}
    as_csv = lambda row: {k: ";".join(v) if isinstance(v, list) else v for k, v in row.items()}  # noqa: E731
    write_csv(os.path.join(folder, "train.csv"), [as_csv(row) for row in data["train"]])
    with open(os.path.join(folder, "test.jsonl"), "w", encoding="utf-8") as f:
        f.writelines(json.dumps(row) + "\n" for row in data["test"])
    with open(os.path.join(folder, "data.json"), "w", encoding="utf-8") as f:
        json.dump(data, f)
    return data


def run_ours(args, folder: str, minilm: str) -> dict:
    output = os.path.join(folder, f"ours-{time.monotonic_ns()}")
    columns = [] if args.task == "multiple-choice" else ["--text-column", "sentence", "--label-column", "target"]
    command = [sys.executable, "-m", "keras_bert3"]
    environment = dict(os.environ, KERAS_BACKEND="tensorflow")
    start = time.perf_counter()
    subprocess.run(
        [*command, "finetune", "--task", args.task, "--preset", minilm, "--train", os.path.join(folder, "train.csv"),
         *columns, "--output", output, "--epochs", str(args.epochs), "--batch-size", "32",
         "--learning-rate", str(args.learning_rate), "--sequence-length", str(args.sequence_length), "--verbose", "0"],
        check=True, capture_output=True, env=environment,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    report = os.path.join(folder, "ours-report.json")
    subprocess.run(
        [*command, "evaluate", "--model", output, "--data", os.path.join(folder, "test.jsonl"), *columns,
         "--report", report],
        check=True, capture_output=True, env=environment,
    )  # fmt: skip
    with open(report, encoding="utf-8") as f:
        scores = json.load(f)
    names = {"regressor": "mean_squared_error", "multi-label-classifier": "micro_f1", "multiple-choice": "accuracy"}
    return {"seconds": seconds, "score": scores[names[args.task]]}


def hf_model_and_features(task: str, minilm: str, data: dict, sequence_length: int):
    """The Hugging Face model of `task`, the encoded train and test sets, and its data collator."""
    import transformers

    tokenizer = transformers.BertTokenizerFast.from_pretrained(minilm)
    if task == "multiple-choice":
        model = transformers.BertForMultipleChoice.from_pretrained(minilm)

        def encoded(rows):
            firsts = [row["sent1"] for row in rows for _ in range(4)]
            seconds = [f"{row['sent2']} {row[f'ending{i}']}" for row in rows for i in range(4)]
            flat = tokenizer(firsts, seconds, truncation=True, max_length=sequence_length)
            return [
                {name: values[4 * i : 4 * i + 4] for name, values in flat.items()} | {"labels": row["label"]}
                for i, row in enumerate(rows)
            ]

        return (
            model,
            encoded(data["train"]),
            encoded(data["test"]),
            transformers.DataCollatorForMultipleChoice(tokenizer),
        )
    names = sorted({name for row in data["train"] for name in row["target"]}) if task != "regressor" else None
    if task == "regressor":
        model = transformers.BertForSequenceClassification.from_pretrained(minilm, num_labels=1)
        label = lambda row: float(row["target"])  # noqa: E731
    else:
        options = {"num_labels": len(names), "problem_type": "multi_label_classification"}
        model = transformers.BertForSequenceClassification.from_pretrained(minilm, **options)
        label = lambda row: [float(name in row["target"]) for name in names]  # noqa: E731

    def encoded(rows):
        texts = tokenizer([row["sentence"] for row in rows], truncation=True, max_length=sequence_length)
        return [
            dict(zip(texts.keys(), values)) | {"labels": label(row)} for row, values in zip(rows, zip(*texts.values()))
        ]

    return model, encoded(data["train"]), encoded(data["test"]), transformers.DataCollatorWithPadding(tokenizer)


def hf_score(task: str, data: dict, predictions) -> float:
    """The test set's mean squared error, micro F1 (at 0.5) or accuracy."""
    import numpy as np

    if task == "regressor":
        return float(np.mean((predictions.reshape(-1) - np.array([row["target"] for row in data["test"]])) ** 2))
    if task == "multiple-choice":
        return float(np.mean(predictions.argmax(-1) == np.array([row["label"] for row in data["test"]])))
    from sklearn.metrics import f1_score

    names = sorted({name for row in data["train"] for name in row["target"]})
    truth = np.array([[name in row["target"] for name in names] for row in data["test"]])
    return float(f1_score(truth, 1 / (1 + np.exp(-predictions)) >= 0.5, average="micro", zero_division=0))


def run_trainer(args, folder: str, minilm: str) -> dict:
    """In this process (started by `--only trainer`): `Trainer` from its imports to its test predictions."""
    start = time.perf_counter()
    import torch
    import transformers

    with open(os.path.join(folder, "data.json"), encoding="utf-8") as f:
        data = json.load(f)
    torch.manual_seed(0)
    model, train, test, collator = hf_model_and_features(args.task, minilm, data, args.sequence_length)
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
    trainer = transformers.Trainer(model=model, args=training, train_dataset=train, data_collator=collator)
    trainer.train()
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "score": hf_score(args.task, data, trainer.predict(test).predictions)}


def baseline(task: str, data: dict) -> str:
    """What the test set's figure is without learning."""
    import numpy as np

    if task == "regressor":
        mean = np.mean([row["target"] for row in data["train"]])
        return f"mean squared error {np.mean([(mean - row['target']) ** 2 for row in data['test']]):.5f} (the mean)"
    if task == "multiple-choice":
        return "accuracy 0.25 (chance)"
    from sklearn.metrics import f1_score

    names = sorted({name for row in data["train"] for name in row["target"]})
    counts = np.array([sum(name in row["target"] for row in data["train"]) for name in names])
    truth = np.array([[name in row["target"] for name in names] for row in data["test"]])
    order = np.argsort(-counts)
    best = max(
        f1_score(truth, np.tile(np.isin(np.arange(len(names)), order[:k]), (len(truth), 1)), average="micro")
        for k in range(1, len(names) + 1)
    )
    return f"micro F1 {best:.4f} (the best constant labels)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--task", choices=["regressor", "multi-label-classifier", "multiple-choice"], default="regressor"
    )
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
    with tempfile.TemporaryDirectory() as folder:
        data = write_data(args, folder)
        print(
            f"{args.task}: {len(data['train'])} training examples, {len(data['test'])} test; {baseline(args.task, data)}"
        )
        own = [sys.executable, os.path.abspath(__file__), "--only", "trainer", "--folder", folder]
        own += [
            f"--{name.replace('_', '-')}={getattr(args, name)}"
            for name in ("task", "epochs", "learning_rate", "sequence_length")
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
                print(f"{row:8} {result['seconds']:7.1f} s  {rate:6.1f} examples/s  score {result['score']:.5f}  "
                      f"(load {load:.2f})", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
