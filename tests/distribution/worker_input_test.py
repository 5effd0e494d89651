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

from keras_bert3.data.default_corpus import default_corpus_documents
from keras_bert3.data.paired_shards import prepare_pretraining_data
from keras_bert3.distribution.worker_input import files_for_worker
from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
from tests.distribution.distribution_test import free_port

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def tokenizer(minilm_dir):
    return BertTokenizer.from_preset(minilm_dir)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The embedded corpus in four files of the original format."""
    directory = tmp_path_factory.mktemp("corpus")
    documents = default_corpus_documents()
    for k in range(4):
        text = "\n\n".join("\n".join(document) for document in documents[k::4]) + "\n"
        (directory / f"part{k}.txt").write_text(text, encoding="utf-8")
    return str(directory / "*.txt")


@pytest.fixture(scope="module")
def prepared(tmp_path_factory, corpus, tokenizer):
    """Six shards of that corpus, and MiniLM's tokenizer."""
    directory = str(tmp_path_factory.mktemp("prepared"))
    prepare_pretraining_data(corpus, tokenizer, directory, num_shards=6, workers=1, verbose=False)
    return directory


def run_workers(data, tokenizer_dir, tmp_path, environments) -> list[collections.Counter]:
    """Runs `worker_examples` in one process per environment, at once; the examples each got."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    processes = []
    for index, environment in enumerate(environments):
        out = tmp_path / f"worker{index}.npy"
        command = [sys.executable, "-m", "tests.distribution.worker_examples", data, tokenizer_dir, str(out), environment.pop("strategy")]
        processes.append(subprocess.Popen(command, cwd=REPO, env=dict(os.environ, **environment),
                                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))  # fmt: skip
    for process in processes:
        _, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stderr.decode()[-3000:]
    return [collections.Counter(np.load(tmp_path / f"worker{index}.npy").tolist()) for index in range(len(environments))]


def two_worker_environments():
    if keras.backend.backend() == "tensorflow":
        workers = [f"localhost:{free_port()}", f"localhost:{free_port()}"]
        return [{"strategy": "multi_worker_mirrored", "TF_CONFIG": json.dumps(
            {"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}})} for index in range(2)]  # fmt: skip
    address = f"localhost:{free_port()}"
    return [{"strategy": "data_parallel", "KERAS_DISTRIBUTION_JOB_ADDRESSES": address,
             "KERAS_DISTRIBUTION_NUM_PROCESSES": "2", "KERAS_DISTRIBUTION_PROCESS_ID": str(index)} for index in range(2)]  # fmt: skip


@pytest.mark.slow
def test_two_workers_split_prepared_shards_exactly(tmp_path, prepared):
    (single,) = run_workers(prepared, prepared, tmp_path / "one", [{"strategy": "none"}])
    first, second = run_workers(prepared, prepared, tmp_path, two_worker_environments())
    assert sum(first.values()) > 0 and sum(second.values()) > 0
    assert first + second == single  # Every example once: none missing, none twice.


@pytest.mark.slow
def test_two_workers_stream_their_own_files(tmp_path, corpus, prepared):
    """Each worker's stream is the one-process stream of its half of the files
    (not sharded again by tf.distribute, not the whole corpus)."""
    paths = sorted(tf.io.gfile.glob(corpus))
    first, second = run_workers(corpus, prepared, tmp_path, two_worker_environments())
    (alone_first,) = run_workers(",".join(paths[0::2]), prepared, tmp_path / "first", [{"strategy": "none"}])
    (alone_second,) = run_workers(",".join(paths[1::2]), prepared, tmp_path / "second", [{"strategy": "none"}])
    assert sum(first.values()) > 0 and first == alone_first
    assert sum(second.values()) > 0 and second == alone_second


def test_more_workers_than_files_is_refused(corpus):
    paths = sorted(tf.io.gfile.glob(corpus))
    with pytest.raises(ValueError, match="5 workers read the corpus but it has only 4 files"):
        files_for_worker(paths, tf.distribute.InputContext(5, 0, 5))
    assert files_for_worker(paths, tf.distribute.InputContext(4, 3, 4)) == paths[3:]
