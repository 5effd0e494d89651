"""Two or more SavedModel exports of the same classifier, loaded in one
process and called in turn, one string a call: for comparing two versions of
an export on a machine whose speed drifts over minutes (a shared VM), where
separate server processes minutes apart can differ by more than the change.

    python bench/bench_exports_ab.py serving/old serving/new --calls 400

Each call of each export gets the same text (bench_serving.py's typical
texts, about 100 tokens), in forward order on even calls and backward on
odd ones; 60 warm-up calls each first. Prints each export's p50 and p10,
the median over calls of its time over the first export's time on the same
text, and the largest difference of its probabilities from the first
export's on 8 texts. Thread settings come from the environment, as in
a server: `TF_NUM_INTRAOP_THREADS=1 TF_NUM_INTEROP_THREADS=1
TF_ONEDNN_ASSUME_FROZEN_WEIGHTS=1 taskset -c 1 python bench/bench_exports_ab.py ...`.
The process imports only tensorflow and tensorflow_text, as TF Serving.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPOSITORY)
from bench.machine import describe_cpu  # noqa: E402

WARMUP_CALLS = 60


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("exports", nargs="+", help="SavedModel directories; the first is the baseline.")
    parser.add_argument("--calls", type=int, default=400)
    args = parser.parse_args()
    if len(args.exports) < 2:
        parser.error("give at least two exports to compare.")

    # The texts are written by a child process (it counts tokens with
    # transformers), so that this one imports what a server imports.
    with tempfile.TemporaryDirectory(prefix="bench_exports_ab_") as directory:
        texts_file = os.path.join(directory, "texts.json")
        code = "import sys; from bench.bench_serving import write_texts; write_texts(sys.argv[1])"
        subprocess.run([sys.executable, "-c", code, texts_file], cwd=REPOSITORY, check=True)
        with open(texts_file, encoding="utf-8") as f:
            texts = json.load(f)["typical"]
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the tokenizer's ops)

    signatures = [tf.saved_model.load(path).signatures["serving_default"] for path in args.exports]

    def probabilities(signature, batch):
        return signature(text=tf.constant(batch))["probabilities"].numpy()

    print(f"CPU: {describe_cpu()}", flush=True)
    for signature in signatures:
        for index in range(WARMUP_CALLS):
            probabilities(signature, [texts[index % len(texts)]])
    seconds = np.zeros((len(signatures), args.calls))
    for index in range(args.calls):
        order = list(enumerate(signatures))  # Forward on even calls, backward on odd: neither goes first always.
        for row, signature in order if index % 2 == 0 else order[::-1]:
            start = time.perf_counter()
            probabilities(signature, [texts[index % len(texts)]])
            seconds[row, index] = time.perf_counter() - start
    baseline_probabilities = probabilities(signatures[0], texts[:8])
    for path, row, signature in zip(args.exports, seconds, signatures):
        difference = np.abs(probabilities(signature, texts[:8]) - baseline_probabilities).max()
        print(
            f"{path}: p50 {1000 * np.median(row):.2f} ms, p10 {1000 * np.percentile(row, 10):.2f} ms, "
            f"time / first's {np.median(row / seconds[0]):.3f}, probabilities within {difference:.1e}"
        )


if __name__ == "__main__":
    main()
