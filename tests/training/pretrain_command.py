"""The `keras-bert3 pretrain` command of the pretraining run's tests (BERT-tiny
on 200 documents, a few seconds), and what its run folder holds."""

import csv
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STEPS, EVERY, LEARNING_RATE, WARMUP = 60, 10, 1e-3, 5


def command(output, corpus, *extra):
    return [
        sys.executable,
        "-m",
        "keras_bert3",
        "pretrain",
        "--output",
        str(output),
        "--corpus",
        corpus,
        "--model",
        "tiny",
        "--steps",
        str(STEPS),
        "--checkpoint-every",
        str(EVERY),
        "--batch-size",
        "8",
        "--sequence-length",
        "64",
        "--max-predictions-per-seq",
        "10",
        "--vocabulary-size",
        "1500",
        "--learning-rate",
        str(LEARNING_RATE),
        "--warmup-steps",
        str(WARMUP),
        "--verbose",
        "2",
        *extra,
    ]


def read_history(output):
    with open(os.path.join(output, "history.csv"), newline="") as f:
        return list(csv.DictReader(f))


def checkpoints(output):
    """The checkpoint folders on disk: complete ones, and half-written ones."""
    names = sorted(os.listdir(os.path.join(output, "backup"))) if os.path.isdir(os.path.join(output, "backup")) else []
    return [n for n in names if n.startswith("checkpoint-")], [n for n in names if n.endswith(".partial")]


def preset_arrays(output):
    """Every array of the final preset's weights files, by file and name."""
    import h5py

    arrays = {}
    for name in sorted(os.listdir(os.path.join(output, "preset"))):
        if name.endswith(".weights.h5"):
            with h5py.File(os.path.join(output, "preset", name), "r") as f:
                f.visititems(
                    lambda key, item: (
                        arrays.__setitem__((name, key), item[()]) if isinstance(item, h5py.Dataset) else None
                    )
                )
    return arrays


def with_flags(args, **flags):
    """`args` with the values of some flags replaced: `with_flags(args, steps=10, learning_rate=1e-4)`."""
    args = list(args)
    for name, value in flags.items():
        args[args.index("--" + name.replace("_", "-")) + 1] = str(value)
    return args


def refusal(main, args, capsys):
    """Runs the CLI in this process; its exit code and its one error line."""
    capsys.readouterr()
    code = main(args)
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("keras-bert3 pretrain: ")]
    return code, errors
