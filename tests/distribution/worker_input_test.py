"""Each worker reads its own files or shards: two workers on localhost (TF
MultiWorkerMirroredStrategy, JAX two processes) consume in one pass exactly
the examples of a one-process pass, none twice; bad worker setups are refused."""

import collections
import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests import warm_commands
from tests.data.conftest import write_corpus_parts
from keras_bert3.data.paired_shards import prepare_pretraining_data
from keras_bert3.distribution.worker_input import files_for_worker
from tests.distribution.distribution_test import free_port
from keras_bert3.data.batching_config import BatchingConfig

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The embedded corpus in four files of the original format."""
    return write_corpus_parts(tmp_path_factory.mktemp("corpus"), 4)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory, corpus, tokenizer):
    """Six shards of that corpus, and MiniLM's tokenizer."""
    directory = str(tmp_path_factory.mktemp("prepared"))
    prepare_pretraining_data(corpus, tokenizer, directory, num_shards=6, workers=1, verbose=False)
    return directory


def run_workers(tokenizer_dir, tmp_path, environments) -> list[list[collections.Counter]]:
    """Runs `worker_examples` in one process per environment ({"strategy", "data": [...],
    optional "fails_with", environment variables}), at once; for each process, the examples
    it got from each data it finished. A process with "fails_with" must fail on its last
    data with that message."""
    processes = []
    for index, environment in enumerate(environments):
        environment = dict(environment)
        strategy, datas = environment.pop("strategy"), environment.pop("data")
        environment.pop("fails_with", None)
        command = [
            sys.executable,
            "-m",
            "tests.distribution.worker_examples",
            tokenizer_dir,
            strategy,
            str(tmp_path / f"process{index}-"),
            *datas,
        ]
        processes.append(
            warm_commands.Popen(
                command,
                cwd=REPO,
                env=dict(os.environ, **environment),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        )
    for process, environment in zip(processes, environments):
        _, stderr = process.communicate(timeout=300)
        if "fails_with" in environment:
            assert process.returncode != 0 and environment["fails_with"] in stderr.decode(), stderr.decode()[-3000:]
        else:
            assert process.returncode == 0, stderr.decode()[-3000:]
    results = []
    for index, environment in enumerate(environments):
        finished = len(environment["data"]) - ("fails_with" in environment)
        results.append(
            [collections.Counter(np.load(tmp_path / f"process{index}-{k}.npy").tolist()) for k in range(finished)]
        )
    return results


def share_in_this_process(corpus, tokenizer_dir, index) -> collections.Counter:
    """Worker `index` of two's streaming share, read here, seeded as `worker_examples` seeds."""
    from keras_bert3.data.pretraining_dataset import pretraining_dataset
    from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
    from tests.distribution.worker_examples import BATCH
    from tests.distribution.worker_examples import example_hashes

    keras.utils.set_random_seed(0)
    context = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=index, num_replicas_in_sync=2)
    dataset = pretraining_dataset(
        corpus,
        BertTokenizer.from_preset(tokenizer_dir),
        batching=BatchingConfig(batch_size=BATCH),
        input_context=context,
    )
    return collections.Counter(hash for batch in dataset.as_numpy_iterator() for hash in example_hashes(*batch))


def two_worker_environments():
    if keras.backend.backend() == "tensorflow":
        workers = [f"localhost:{free_port()}", f"localhost:{free_port()}"]
        return [
            {
                "strategy": "multi_worker_mirrored",
                "TF_CONFIG": json.dumps({"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}),
            }
            for index in range(2)
        ]
    address = f"localhost:{free_port()}"
    return [
        {
            "strategy": "data_parallel",
            "KERAS_DISTRIBUTION_JOB_ADDRESSES": address,
            "KERAS_DISTRIBUTION_NUM_PROCESSES": "2",
            "KERAS_DISTRIBUTION_PROCESS_ID": str(index),
        }
        for index in range(2)
    ]


@pytest.mark.slow
def test_two_workers_read_their_own_share(tmp_path, corpus, prepared):
    """Prepared shards: the two workers' examples together are a one-process
    pass, each example once. Streaming text: each worker's stream is its share
    of the corpus's ranges as one process reads it (not sharded again by
    tf.distribute, not the whole corpus). Then workers given different files are refused.

    About a minute: two worker processes, each starting TensorFlow or JAX and
    reading three inputs in turn, beside one pass read here (50-70 s of CPU)."""
    from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
    from tests.distribution.worker_examples import worker_pass

    paths = sorted(tf.io.gfile.glob(corpus))
    # Last, a corpus glob that differs between the workers (one misses a file): refused on both.
    differing = [corpus, ",".join(paths[:3])]
    workers = [
        dict(environment, data=[prepared, corpus, differing[index]], fails_with="The workers see different files")
        for index, environment in enumerate(two_worker_environments())
    ]
    ((shards_first, first), (shards_second, second)) = run_workers(prepared, tmp_path, workers)
    keras.utils.set_random_seed(0)  # One process's pass, here, seeded as `worker_examples` seeds its processes.
    single = collections.Counter(worker_pass(prepared, BertTokenizer.from_preset(prepared)))
    alone_first, alone_second = (share_in_this_process(corpus, prepared, index) for index in range(2))
    assert sum(shards_first.values()) > 0 and sum(shards_second.values()) > 0
    assert shards_first + shards_second == single  # Every example once: none missing, none twice.
    assert sum(first.values()) > 0 and first == alone_first
    assert sum(second.values()) > 0 and second == alone_second


@pytest.mark.backend_free
def test_more_workers_than_files_is_refused(corpus):
    paths = sorted(tf.io.gfile.glob(corpus))
    with pytest.raises(ValueError, match="5 workers read the corpus but it has only 4 files"):
        files_for_worker(paths, tf.distribute.InputContext(5, 0, 5))
    assert files_for_worker(paths, tf.distribute.InputContext(4, 3, 4)) == paths[3:]
