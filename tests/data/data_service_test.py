"""The pretraining input on `tf.data` service: a dispatcher and two workers,
each in its own process (`keras-bert3 data-service`), on localhost. A served
pass is a local pass, `pretrain --data-service` trains, every process ends;
an address where nothing answers is refused in bounded time."""

import collections
import concurrent.futures
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

from keras_bert3.data import pretraining_dataset
from keras_bert3.data.data_counters import DataCounters
from keras_bert3.distribution.data_service_dispatcher import check_dispatcher_answers
from keras_bert3.distribution.data_service_dispatcher import check_dispatcher_has_workers
from keras_bert3.distribution.data_service_client import served_by_data_service
from keras_bert3.data.paired_shards import prepare_pretraining_data
from keras_bert3.data.paired_shards import read_paired_shards
from keras_bert3.upstream.data_service_stop import stop_within
from keras_bert3.upstream.data_service_workers import registered_workers
from keras_bert3_demo.site_packages_corpus import site_packages_corpus_path
from tests.data.conftest import write_corpus_parts
from tests.data.one_batch_then_exit import seconds_to_read_one_batch_and_exit
from tests.distribution.distribution_test import free_port
from tests.distribution.worker_examples import example_hashes
from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.pairing_config import PairingConfig
from tests import warm_commands

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def start_server(log_path, *args) -> subprocess.Popen:
    with open(log_path, "w") as log:  # A file, not a pipe nobody reads till the end.
        return warm_commands.Popen(
            [sys.executable, "-m", "keras_bert3", "data-service", *args],
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            teardown=True,  # The servers' ending is under test: the interpreter's own, whole.
        )


@pytest.fixture(scope="module")
def running_service(tmp_path_factory):
    """A function that returns (address, [(process, log path)]): a dispatcher and two workers
    on localhost, shared by this file's tests, started anew where a test has stopped them (the
    last test does; a repeated or reordered test after it gets its own)."""
    started = []  # (address, servers) of each set started; the last is the one in use.

    def running():
        if started and all(process.poll() is None for process, _ in started[-1][1]):
            return started[-1]
        logs = tmp_path_factory.mktemp("service")
        port = free_port()
        started.append((f"localhost:{port}", []))
        for index, args in enumerate(
            [["dispatcher", "--port", str(port)]]
            + 2 * [["worker", "--dispatcher", f"localhost:{port}", "--worker-address", "localhost:%port%"]]
        ):
            started[-1][1].append((start_server(logs / f"{index}.log", *args), logs / f"{index}.log"))
        check_dispatcher_answers(f"localhost:{port}", timeout=120)
        return started[-1]

    try:
        yield running
    finally:
        for _, servers in started:
            for process, _ in servers:  # Still running: not stopped by a test.
                if process.poll() is None:
                    process.kill()
                    process.wait()


@pytest.fixture
def service(running_service):
    """(address, [(process, log path)]): the running dispatcher and two workers."""
    return running_service()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The embedded corpus in four files of the original format."""
    return write_corpus_parts(tmp_path_factory.mktemp("corpus"), 4)


def example_counts(dataset) -> collections.Counter:
    return collections.Counter(h for x, y, w in dataset.as_numpy_iterator() for h in example_hashes(x, y, w))


@pytest.mark.backend_free
@pytest.mark.slow
def test_a_served_pass_is_a_local_pass(service, tmp_path, corpus, tokenizer):
    """Prepared shards through the service: each example of a local pass once,
    no other. Raw text: the workers pair the files they are handed, and the
    pass has the local pass's size and balanced NSP."""
    address, _ = service
    prepare_pretraining_data(corpus, tokenizer, str(tmp_path), num_shards=6, workers=1, verbose=False)
    local = example_counts(read_paired_shards(str(tmp_path), tokenizer, batching=BatchingConfig(batch_size=16)))
    served_dataset = read_paired_shards(
        str(tmp_path), tokenizer, batching=BatchingConfig(batch_size=16), data_service=address
    )
    assert served_dataset.options().autotune.enabled is False  # As a local pass (data/without_autotune.py).
    served = example_counts(served_dataset)
    assert served == local and sum(local.values()) > 4000

    labels = {}
    for name, data_service in (("local", None), ("served", address)):
        dataset = pretraining_dataset(
            corpus, tokenizer, batching=BatchingConfig(batch_size=64), seed=5, data_service=data_service
        )
        labels[name] = np.concatenate([y["nsp"] for _, y, _ in dataset.as_numpy_iterator()])
    # A pass's size depends on its draws (target lengths, random next segments):
    # local passes of this corpus with seeds 0-3 made 4,402 to 4,854 examples.
    assert abs(len(labels["served"]) / len(labels["local"]) - 1) < 0.12, {k: len(v) for k, v in labels.items()}
    assert abs(np.mean(labels["served"] == 0) - 0.5) < 0.03


@pytest.mark.backend_free
@pytest.mark.slow
def test_served_passes_have_fresh_masks(service, tmp_path, corpus, tokenizer):
    """Each served pass (a new job, whose workers rebuild the pipeline) draws
    new masks on the same examples, and two workers do not share their draws."""
    address, _ = service
    prepare_pretraining_data(corpus, tokenizer, str(tmp_path), num_shards=6, workers=1, verbose=False)
    dataset = read_paired_shards(str(tmp_path), tokenizer, batching=BatchingConfig(batch_size=16), data_service=address)
    masks = []  # For each pass: example (unmasked) -> its masked positions.
    for _ in range(2):
        masks.append(
            {
                h: tuple(row)
                for x, y, w in dataset.as_numpy_iterator()
                for h, row in zip(example_hashes(x, y, w), x["mask_positions"])
            }
        )
    assert masks[0].keys() == masks[1].keys() and len(masks[0]) > 4000  # The same examples...
    same = np.mean([masks[0][h] == masks[1][h] for h in masks[0]])
    assert same < 0.2, same  # ...masked anew (only the shortest can draw the same positions by chance).


@pytest.mark.backend_free
@pytest.mark.slow
def test_a_pass_without_examples_raises(service, tmp_path, tokenizer):
    """A document of one sentence makes no NSP pair: the served pass says so
    instead of `repeat()` waiting for batches forever."""
    (tmp_path / "one.txt").write_text("A single document of a single sentence.\n", encoding="utf-8")
    dataset = pretraining_dataset(
        str(tmp_path / "one.txt"), tokenizer, batching=BatchingConfig(batch_size=8), data_service=service[0]
    ).repeat()
    with pytest.raises(Exception, match="gave no batch"):
        next(iter(dataset))


@pytest.mark.backend_free
@pytest.mark.slow
def test_reading_one_batch_then_exiting_ends(service, minilm_dir):
    """On the 21 MB corpus, one served batch, then the reading process exits."""
    corpus = site_packages_corpus_path()  # Derived once on the machine (tests/derived_corpora.py), then cached.
    assert seconds_to_read_one_batch_and_exit(corpus, minilm_dir, service[0]) < 30


@pytest.mark.slow
@pytest.mark.one_pass
def test_pretrain_on_the_service_then_every_process_ends(service, tmp_path, corpus, run_vocabulary):
    """`keras-bert3 pretrain --data-service` trains its steps; the dispatcher
    and workers then stop on SIGTERM, each with exit code 0."""
    address, servers = service
    result = warm_commands.run(
        [
            sys.executable,
            "-m",
            "keras_bert3",
            "pretrain",
            "--output",
            str(run_vocabulary(tmp_path / "run")),
            "--corpus",
            corpus,
            "--steps",
            "6",
            "--checkpoint-every",
            "3",
            "--batch-size",
            "8",
            "--sequence-length",
            "64",
            "--max-predictions-per-seq",
            "10",
            "--vocabulary-size",
            "1500",
            "--verbose",
            "2",
            "--data-service",
            address,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    with open(tmp_path / "run" / "history.csv") as f:
        assert len(f.read().strip().splitlines()) == 3  # Header and two checkpoints.
    for process, _ in servers:
        process.send_signal(signal.SIGTERM)
    for process, log in servers:  # A worker exits at once; the dispatcher within 10 s (STOP_SECONDS).
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{process.args[4]} still running 30 s after SIGTERM:\n{log.read_text()[-2000:]}")
        output = log.read_text()
        assert process.returncode == 0 and "stopping" in output, output[-2000:]


@pytest.mark.backend_free
@pytest.mark.slow
def test_an_address_without_dispatcher_is_refused_in_bounded_time(corpus, tokenizer):
    address = f"localhost:{free_port()}"
    local = pretraining_dataset(corpus, tokenizer)  # What `data_service=` sends to the service (10 s default wait).
    start = time.perf_counter()
    with pytest.raises(ConnectionError, match=f"No tf.data service dispatcher answers at {address}"):
        served_by_data_service(local, address, connect_timeout=2)
    assert time.perf_counter() - start < 10
    with pytest.raises(ValueError, match="host:port"):
        pretraining_dataset(corpus, tokenizer, data_service="localhost")


@pytest.mark.backend_free
def test_a_dispatcher_without_workers_is_refused_in_bounded_time(corpus, tokenizer, tmp_path):
    """A job there would wait for a worker forever: the run is refused, naming
    the command that starts one; a worker that registers within the time (here,
    started while the check waits) is waited for. The dispatcher is the
    command's (`keras-bert3 data-service dispatcher`), which SIGTERM then stops
    with exit 0."""
    service = tf.data.experimental.service
    address = f"localhost:{free_port()}"
    dispatcher = start_server(tmp_path / "dispatcher.log", "dispatcher", "--port", address.split(":")[1])
    check_dispatcher_answers(address, timeout=120)
    local = pretraining_dataset(corpus, tokenizer)  # What `data_service=` sends to the service (60 s default wait).
    start = time.perf_counter()
    with pytest.raises(
        ConnectionError,
        match=f"dispatcher at {address} has no worker after 2 s.*"
        f"keras-bert3 data-service worker --dispatcher {address}",
    ):
        served_by_data_service(local, address, worker_timeout=2)
    assert time.perf_counter() - start < 10

    # The check waits on the real dispatcher in a thread; a worker starts while it does.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(check_dispatcher_has_workers, address, 30)
        assert registered_workers(address) == []
        worker = service.WorkerServer(service.WorkerConfig(dispatcher_address=address))
        assert waiting.result()[0].startswith("localhost:")  # Served passes: tests above.
    stop_within(worker, 10, "worker")
    dispatcher.send_signal(signal.SIGTERM)
    assert dispatcher.wait(timeout=60) == 0
    assert "tf.data service dispatcher stopped" in (tmp_path / "dispatcher.log").read_text()


@pytest.mark.backend_free
def test_what_service_workers_cannot_run_is_refused(corpus, tokenizer):
    with pytest.raises(ValueError, match="counters= cannot be used with a tf.data service"):
        pretraining_dataset(corpus, tokenizer, counters=DataCounters(), data_service="localhost:1")
    with pytest.raises(ValueError, match="splits sentences in Python"):
        pretraining_dataset(corpus, tokenizer, PairingConfig(file_format="paragraphs"), data_service="localhost:1")
