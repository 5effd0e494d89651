"""Reading one batch in a fresh process, then exiting: how long from the
libraries imported to the process gone (the hang this guards against was at
exit, in a tf.data iterator's destructor)."""

import os
import sys
import time

from tests import warm_commands

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
READ_ONE_BATCH = """
import os, sys, time
from keras_bert3.data import BatchingConfig, pretraining_dataset
from keras_bert3.data.paired_shards import read_paired_shards
from keras_bert3.tokenizers import BertTokenizer
print("imported", time.monotonic(), flush=True)
tokenizer = BertTokenizer.from_preset(sys.argv[2])
service = {"data_service": sys.argv[3]} if len(sys.argv) > 3 else {}
read = read_paired_shards if os.path.isdir(sys.argv[1]) else pretraining_dataset
x, _, _ = next(iter(read(sys.argv[1], tokenizer, batching=BatchingConfig(batch_size=64), **service)))
print(x["token_ids"].shape)
"""


def seconds_to_read_one_batch_and_exit(data: str, preset: str, *service_address: str) -> float:
    """Runs the reader on `data` (a corpus, or a directory of prepared shards),
    optionally through a tf.data service; checks it read a (64, 128) batch and
    exited cleanly; returns the seconds from its imports done to its exit.
    TensorFlow's import (6 s on an idle machine, several times that on a busy
    one) is left out: it is not the pipeline.

    Example:
    >>> seconds_to_read_one_batch_and_exit(corpus_path, minilm_dir) < 30
    True
    """
    completed = warm_commands.run(
        [sys.executable, "-c", READ_ONE_BATCH, data, preset, *service_address],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        teardown=True,  # The interpreter's ending, where the hang was.
    )
    ended = time.monotonic()  # The child's clock too (system-wide on Linux).
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert "(64, 128)" in completed.stdout, completed.stdout
    seconds = ended - float(completed.stdout.split("imported")[1].split()[0])
    print(f"read one batch and exited in {seconds:.1f} s after the imports")
    return seconds
