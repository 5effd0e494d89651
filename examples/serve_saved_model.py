"""Serve an exported keras_bert3 SavedModel as TF Serving does: raw strings in,
the tokenizer inside the graph, no keras and no keras_bert3 in the process.

It loads the export with TensorFlow and tf-text only, lists its signatures,
answers the texts given, times one string and batches of 64, and writes the
JSON body of the REST request that TF Serving would take for the same texts.
Run from the repository root, after an export (e.g. `keras-bert3 pipeline
--output runs/main`, or examples/finetune_classifier.py):

    python examples/serve_saved_model.py --model runs/main/serving/1 "Round the decimal number to two places."

TF Serving itself (Docker; its build includes the tf-text ops):

    docker run -p 8501:8501 -v "$PWD/runs/main/serving:/models/classifier" -e MODEL_NAME=classifier tensorflow/serving
    curl -d @runs/main/serving/request.json http://localhost:8501/v1/models/classifier:predict

The server settings that make it fast on each CPU (frozen weights, threads):
docs/serving.md, "Which export on which CPU"; this script honours the same
environment variables (`TF_ONEDNN_ASSUME_FROZEN_WEIGHTS=1 TF_NUM_INTEROP_THREADS=1`).
"""

import argparse
import json
import os
import sys
import time

import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the tokenizer's ops, as TF Serving's build does)

DEFAULT_TEXTS = [
    "Send the message to the mail server and wait for the reply.",
    "Remove the temporary directory and all the files in it.",
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a SavedModel directory written by export")
    parser.add_argument("texts", nargs="*", help="texts to classify (default: two examples)")
    parser.add_argument("--repeats", type=int, default=20, help="timed calls for the latency and throughput figures")
    args = parser.parse_args()
    texts = args.texts or DEFAULT_TEXTS

    model = tf.saved_model.load(args.model)
    serve = model.signatures["serving_default"]
    inputs = serve.structured_input_signature[1]
    print(f"signatures: {sorted(model.signatures)}; serving_default takes {sorted(inputs)}")
    if "text" not in inputs or "context" in inputs:
        sys.exit("This script sends single texts; this export takes " + ", ".join(sorted(inputs)) + ".")
    if "text_pair" in inputs:
        sys.exit("This export classifies pairs: call serving_default(text=..., text_pair=...).")

    names_path = os.path.join(args.model, "class_names.json")
    outputs = serve(text=tf.constant(texts))
    probabilities = outputs["probabilities"].numpy()
    names = json.load(open(names_path))["class_names"] if os.path.isfile(names_path) else None
    for text, p in zip(texts, probabilities):
        best = int(np.argmax(p))
        print(f"{names[best] if names else best}\t{p[best]:.3f}\t{text}")

    # Latency of one string and throughput of batches of 64, tokenization included.
    one = tf.constant(texts[:1])
    batch = tf.constant((texts * 64)[:64])
    serve(text=one), serve(text=batch)  # Warm-up.
    start = time.perf_counter()
    for _ in range(args.repeats):
        serve(text=one)
    latency = (time.perf_counter() - start) / args.repeats
    start = time.perf_counter()
    for _ in range(args.repeats):
        serve(text=batch)
    throughput = 64 * args.repeats / (time.perf_counter() - start)
    print(f"latency {1000 * latency:.1f} ms for one string; {throughput:.0f} strings/s in batches of 64")

    request_path = os.path.join(os.path.dirname(os.path.abspath(args.model)), "request.json")
    with open(request_path, "w") as f:
        json.dump({"signature_name": "serving_default", "instances": [{"text": t} for t in texts]}, f)
    print(f"TF Serving REST request body: {request_path}")


if __name__ == "__main__":
    main()
