"""Shards and first batches of the pretraining data entry points, written to a
folder, so that two checkouts' outputs can be compared byte for byte (a
refactoring of the entry points must leave them the same).

    PYTHONPATH=/path/to/old python bench/check_same_shards.py /tmp/old
    PYTHONPATH=/path/to/new python bench/check_same_shards.py /tmp/new
    python bench/check_same_shards.py --compare /tmp/old /tmp/new

Uses the embedded corpus in two files and a vocabulary learnt on it (512
tokens), a small non-default pairing (sequence length 64, pairing group 32,
short_seq_prob 0.2, the original NSP coin flip) besides the defaults.
"""

import json
import os
import sys

import numpy as np


SMALL = dict(sequence_length=64, short_seq_prob=0.2, balanced_nsp=False, pairing_group=32)


def write(out: str) -> None:
    """Shards (`out/default`, `out/small`) and the first 3 batches of three
    streams (`out/NAME.npz`) of this checkout's entry points."""
    files, tokenizer = _corpus_and_tokenizer(out)
    try:
        from keras_bert3.data.pairing_config import PairingConfig  # noqa: F401
    except ImportError:  # The old entry points, each setting a parameter.
        streams = _old_entry_points(files, tokenizer, out)
    else:
        streams = _config_entry_points(files, tokenizer, out)
    for name, dataset in streams.items():
        arrays = {}
        for i, batch in enumerate(dataset.take(3).as_numpy_iterator()):
            for part, values in zip("xyw", batch):
                for key, value in values.items():
                    arrays[f"{i}_{part}_{key}"] = value
        np.savez(os.path.join(out, f"{name}.npz"), **arrays)


def _corpus_and_tokenizer(out: str):
    """The embedded corpus's first 400 documents in two files under `out/corpus`, and a 512-token vocabulary."""
    from keras_bert3_demo import default_corpus_documents

    from keras_bert3.tokenizers import BertTokenizer
    from keras_bert3.tokenizers.wordpiece_vocabulary import learn_wordpiece_vocabulary

    documents = default_corpus_documents()[:400]
    corpus = os.path.join(out, "corpus")
    os.makedirs(corpus, exist_ok=True)
    for k in range(2):
        with open(os.path.join(corpus, f"part{k}.txt"), "w", encoding="utf-8") as f:
            f.write("\n\n".join("\n".join(document) for document in documents[k::2]) + "\n")
    tokenizer = BertTokenizer(learn_wordpiece_vocabulary([s for d in documents for s in d], 512))
    return os.path.join(corpus, "*.txt"), tokenizer


def _old_entry_points(files, tokenizer, out: str) -> dict:
    from keras_bert3.data import paired_shards
    from keras_bert3.data.pretraining_dataset import pretraining_dataset

    paired_shards.prepare_pretraining_data(files, tokenizer, f"{out}/default", num_shards=4, workers=1, verbose=False)
    paired_shards.prepare_pretraining_data(
        files, tokenizer, f"{out}/small", num_shards=3, workers=1, seed=7, verbose=False, **SMALL
    )
    return {
        "stream_default": pretraining_dataset(files, tokenizer, batch_size=16, seed=3),
        "stream_small": pretraining_dataset(
            files,
            tokenizer,
            batch_size=16,
            seed=3,
            max_predictions_per_seq=8,
            whole_word_masking=True,
            packed_length=128,
            **SMALL,
        ),
        "shards_small": paired_shards.read_paired_shards(
            f"{out}/small", tokenizer, batch_size=16, seed=3, max_predictions_per_seq=8, packed_length=128
        ),
    }


def _config_entry_points(files, tokenizer, out: str) -> dict:
    from keras_bert3.data import paired_shards
    from keras_bert3.data.batching_config import BatchingConfig
    from keras_bert3.data.masking_config import MaskingConfig
    from keras_bert3.data.pairing_config import PairingConfig
    from keras_bert3.data.pretraining_dataset import pretraining_dataset

    paired_shards.prepare_pretraining_data(files, tokenizer, f"{out}/default", num_shards=4, workers=1, verbose=False)
    paired_shards.prepare_pretraining_data(
        files, tokenizer, f"{out}/small", PairingConfig(**SMALL), num_shards=3, workers=1, seed=7, verbose=False
    )
    rows = BatchingConfig(batch_size=16, packed_length=128)
    return {
        "stream_default": pretraining_dataset(files, tokenizer, batching=BatchingConfig(batch_size=16), seed=3),
        "stream_small": pretraining_dataset(
            files,
            tokenizer,
            PairingConfig(**SMALL),
            MaskingConfig(max_predictions_per_seq=8, whole_word_masking=True),
            rows,
            seed=3,
        ),
        "shards_small": paired_shards.read_paired_shards(
            f"{out}/small", tokenizer, MaskingConfig(max_predictions_per_seq=8), rows, seed=3
        ),
    }


def compare(old: str, new: str) -> int:
    differ = 0
    for root, _, names in os.walk(old):
        for name in sorted(names):
            a = os.path.join(root, name)
            b = os.path.join(new, os.path.relpath(a, old))
            if name.endswith(".json"):  # As dicts, the time a preset was saved aside.
                same = {**json.load(open(a)), "saved_at": None} == {**json.load(open(b)), "saved_at": None}
            elif name.endswith(".npz"):
                x, y = np.load(a), np.load(b)
                same = sorted(x) == sorted(y) and all(np.array_equal(x[k], y[k]) for k in x)
            else:
                same = open(a, "rb").read() == open(b, "rb").read()
            print(f"{'same' if same else 'DIFFERENT'} {os.path.relpath(a, old)}")
            differ += not same
    return differ


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        sys.exit(1 if compare(sys.argv[2], sys.argv[3]) else 0)
    write(sys.argv[1])
