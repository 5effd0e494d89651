"""A checkpoint's weights file written the two ways, alternated: Keras'
`model.save_weights(path)` (HDF5 writes the file itself, and crashes the
process where a write fails) against `keras_bert3.files.weight_files.
save_keras_weights` (HDF5 writes through a Python file object that keeps a
failed write's error: what every checkpoint and preset now uses).

    python bench/bench_checkpoint_write.py --size base --rounds 3

The model is a `BertPretrainer` of the size asked, its AdamW state built (so
the file holds what a checkpoint holds: weights and two moments each). Each
round writes the file once each way, in turn (A B, then B A), into
`--folder` (default: a temporary folder on the disk the runs use), and
fsyncs it as a checkpoint does. Prints the size, each way's best and worst
seconds, the ratio of the bests, and the load average before and after.
"""

import argparse
import os
import sys
import tempfile
import time

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPOSITORY)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="base", help="tiny ... large (keras_bert3's standard sizes)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--folder", default=os.path.join(REPOSITORY, "runs"))
    args = parser.parse_args()

    from bench.machine import describe_cpu
    from keras_bert3.files.weight_files import save_keras_weights
    from keras_bert3.files.whole_folders import flush_to_disk
    from keras_bert3.models.bert_backbone import BertBackbone
    from keras_bert3.models.bert_pretrainer import BertPretrainer

    print(f"CPU: {describe_cpu()}; load before: {os.getloadavg()[0]:.2f}")
    pretrainer = BertPretrainer(BertBackbone.from_size(args.size))
    pretrainer.compile(precision="float32")
    pretrainer.optimizer.build(pretrainer.trainable_variables)
    os.makedirs(args.folder, exist_ok=True)
    ways = {
        "keras save_weights": lambda path: pretrainer.save_weights(path),
        "through a file object": lambda path: save_keras_weights(pretrainer, path),
    }
    seconds = {name: [] for name in ways}
    with tempfile.TemporaryDirectory(dir=args.folder) as folder:
        path = os.path.join(folder, "model.weights.h5")
        for round_number in range(args.rounds):
            order = list(ways) if round_number % 2 == 0 else list(reversed(ways))
            for name in order:
                start = time.perf_counter()
                ways[name](path)
                flush_to_disk(path)
                seconds[name].append(time.perf_counter() - start)
                size = os.path.getsize(path)
                os.remove(path)
    print(f"BERT-{args.size} with AdamW state: {size / 2**20:,.0f} MiB, {args.rounds} rounds, alternated")
    for name, times in seconds.items():
        print(f"  {name:<22} best {min(times):6.2f} s, worst {max(times):6.2f} s")
    first, second = (min(times) for times in seconds.values())
    print(f"  best through a file object / best keras: {second / first:.2f}; load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
