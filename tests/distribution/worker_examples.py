"""One worker's pass over the pretraining data, as `keras-bert3 pretrain
--strategy` builds it (`worker_dataset`): saves a hash of every example it
gets, unmasked (token ids with the masked positions put back, and segment ids).

    python -m tests.distribution.worker_examples TOKENIZER STRATEGY OUT DATA [DATA ...]

writes OUT0.npy, OUT1.npy, ... one per DATA: a corpus glob (or globs joined by
commas), or a `prepare-data` directory. Run one process per worker (TF_CONFIG for "multi_worker_mirrored",
KERAS_DISTRIBUTION_* for JAX's "data_parallel"), or one with STRATEGY "none".
The global seed is set first, as `keras-bert3 pretrain` does: `tf.data`'s
seeded shuffles depend on it (and Keras sets a random one across JAX processes).
"""

import hashlib
import os
import sys

import keras
import numpy as np
import tensorflow as tf

from keras_bert3.data.paired_shards import INFO_FILE
from keras_bert3.data.paired_shards import read_paired_shards
from keras_bert3.data.pretraining_dataset import pretraining_dataset
from keras_bert3.distribution import distribution_scope
from keras_bert3.distribution.worker_input import worker_dataset
from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
from keras_bert3.data.batching_config import BatchingConfig

BATCH = 16


def example_hashes(x, y, sample_weight) -> list[int]:
    token_ids = np.array(x["token_ids"])
    rows, columns = np.nonzero(np.array(sample_weight["mlm"]))
    positions = np.array(x["mask_positions"])[rows, columns]
    token_ids[rows, positions] = np.array(y["mlm"])[rows, columns]
    segments = np.array(x["segment_ids"])
    return [
        int.from_bytes(hashlib.sha1(t.tobytes() + s.tobytes()).digest()[:8], "little")
        for t, s in zip(token_ids, segments)
    ]


def main(tokenizer_dir: str, strategy: str, out: str, *datas: str) -> None:
    keras.utils.set_random_seed(0)
    # The strategy first: MultiWorkerMirroredStrategy must start before any TF op runs.
    with distribution_scope(strategy):
        tokenizer = BertTokenizer.from_preset(tokenizer_dir)
        for index, data in enumerate(datas):
            np.save(f"{out}{index}.npy", np.array(worker_pass(data, tokenizer), dtype=np.uint64))


def worker_pass(data: str, tokenizer) -> list[int]:
    def make_dataset(input_context, batch_size):
        if os.path.isfile(os.path.join(data, INFO_FILE)):
            return read_paired_shards(
                data, tokenizer, batching=BatchingConfig(batch_size=batch_size), input_context=input_context
            )
        return pretraining_dataset(
            data.split(","), tokenizer, batching=BatchingConfig(batch_size=batch_size), input_context=input_context
        )

    hashes = []
    dataset = worker_dataset(make_dataset, BATCH)
    if isinstance(dataset, tf.data.Dataset):
        for x, y, w in dataset.as_numpy_iterator():
            hashes += example_hashes(x, y, w)
    else:  # A distributed dataset: this worker's replicas' parts.
        strategy = tf.distribute.get_strategy()
        for batch in dataset:
            for x, y, w in zip(*[strategy.experimental_local_results(part) for part in batch]):
                hashes += example_hashes(x, y, w)
    return hashes


if __name__ == "__main__":
    main(*sys.argv[1:])
