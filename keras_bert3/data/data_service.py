"""Pretraining input computed by `tf.data` service workers: the trainer sends
its pipeline to a dispatcher, CPU hosts pair, tokenize and mask, the trainer
only receives batches.

The dispatcher hands out the pipeline's files (corpus files or prepared
shards) one at a time to whichever worker asks (`ShardingPolicy.DYNAMIC`):
each file is read by one worker, a pass covers the corpus once, and adding
workers adds input rate. Start the servers with `keras-bert3 data-service`
(see `data_service_server`); they need the corpus at the same paths (a shared
file system or bucket).
"""

import socket
import time

import grpc
import tensorflow as tf

from keras_bert3.upstream.data_service_workers import registered_workers

# How long the dispatcher is given to answer before the run is refused:
# `tf.data` service itself retries an unreachable dispatcher for an hour.
CONNECT_TIMEOUT_S = 10.0
# How long the dispatcher is given to have a worker: a worker registers a few
# seconds after it starts (most of it TensorFlow's import), and a job on a
# dispatcher without one waits for one forever.
WORKER_TIMEOUT_S = 60.0


def served_by_data_service(dataset: tf.data.Dataset, address: str, *, connect_timeout: float = CONNECT_TIMEOUT_S,
                           worker_timeout: float = WORKER_TIMEOUT_S) -> tf.data.Dataset:  # fmt: skip
    """`dataset` computed by the `tf.data` service workers of the dispatcher at
    `address`, its source files shared out between them.

    Every iteration (each pass of `fit`) is a new job over the whole dataset:
    the workers read disjoint files and together give each example of the pass
    once, in an order that depends on which worker is faster (not reproducible).

    Args:
        dataset: a `tf.data.Dataset` whose source is a list of files and whose
            functions are TensorFlow ops (no `py_function`, no generator).
        address: "host:port" (or "grpc://host:port") of the dispatcher.
        connect_timeout: float. Seconds to wait for the dispatcher to answer.
        worker_timeout: float. Seconds to wait for a worker to register with it.

    Raises:
        ConnectionError: nothing answers at `address` within `connect_timeout`,
            or the dispatcher has no worker after `worker_timeout`.

    Example:
    >>> dataset = served_by_data_service(read_paired_shards("prepared", tokenizer), "dispatcher:5050")  # doctest: +SKIP
    """
    target = check_dispatcher_answers(address, connect_timeout)
    check_dispatcher_has_workers(address, worker_timeout)
    served = dataset.apply(
        tf.data.experimental.service.distribute(
            processing_mode=tf.data.experimental.service.ShardingPolicy.DYNAMIC, service=target
        )
    )
    return _each_pass_gives_something(served, address).prefetch(tf.data.AUTOTUNE)


def _each_pass_gives_something(dataset: tf.data.Dataset, address: str) -> tf.data.Dataset:
    """Raises at the end of a pass that gave no element. (A pass of a local
    dataset checks its corpus itself; a worker cannot, as it sees a part; and
    `repeat()` over service input loops on empty passes instead of ending.)"""
    empty = tf.nest.map_structure(
        lambda spec: tf.zeros([0 if size is None else size for size in spec.shape.as_list()], spec.dtype),
        dataset.element_spec,
    )
    marked = dataset.map(lambda *element: (element, False))
    marked = marked.concatenate(tf.data.Dataset.from_tensors((tuple(empty) if isinstance(empty, tuple) else (empty,), True)))
    message = (
        f"A pass of the tf.data service at {address} gave no batch: the corpus makes no example (a single "
        "document, or no text the workers can read at the paths given), or too few for one batch on each "
        "worker with drop_remainder. Read it without --data-service to see which."
    )

    def count(seen, element_and_end):
        element, is_end = element_and_end
        check = tf.debugging.Assert(~is_end | (seen > 0), [message])
        with tf.control_dependencies([check]):
            return seen + 1, (tf.nest.map_structure(tf.identity, element), is_end)

    checked = marked.scan(tf.constant(0, tf.int64), count).filter(lambda element, is_end: ~is_end)
    single = not isinstance(dataset.element_spec, tuple)
    return checked.map(lambda element, is_end: element[0] if single else element)


def check_dispatcher_answers(address: str, timeout: float = CONNECT_TIMEOUT_S) -> str:
    """Connects to the dispatcher at `address` within `timeout` seconds (a
    refused or unanswered connection is tried again till then); returns the
    service target "grpc://host:port".

    Raises:
        ValueError: `address` is not "host:port".
        ConnectionError: nothing answers.

    Example:
    >>> check_dispatcher_answers("localhost:5050")  # doctest: +SKIP
    'grpc://localhost:5050'
    """
    host, port = parse_address(address)
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, port), timeout=max(0.1, deadline - time.monotonic())):
                return f"grpc://{join_address(host, port)}"
        except OSError as error:
            if time.monotonic() + 0.5 >= deadline:
                raise ConnectionError(
                    f"No tf.data service dispatcher answers at {host}:{port} (waited {timeout:.0f} s: "
                    f"{error}). Start one there with `keras-bert3 data-service dispatcher --port {port}` and "
                    f"its workers with `keras-bert3 data-service worker --dispatcher {host}:{port}`, or "
                    "check the address; without --data-service the trainer computes its own input."
                ) from error
            time.sleep(0.5)


def check_dispatcher_has_workers(address: str, timeout: float = WORKER_TIMEOUT_S) -> list[str]:
    """Waits up to `timeout` seconds for a worker to register with the
    dispatcher at `address`; returns the registered workers' addresses.

    Raises:
        ConnectionError: none has registered by then.

    Example:
    >>> check_dispatcher_has_workers("localhost:5050")  # doctest: +SKIP
    ['worker-0:40417']
    """
    host, port = parse_address(address)
    deadline = time.monotonic() + timeout
    while True:
        try:
            workers = registered_workers(join_address(host, port), timeout=max(0.5, deadline - time.monotonic()))
        except grpc.RpcError as error:  # The dispatcher answered a connection, not (yet) this call.
            workers, problem = [], f" (its last answer: {error.code().name})"
        else:
            problem = ""
        if workers:
            return workers
        if time.monotonic() + 0.5 >= deadline:
            raise ConnectionError(
                f"The tf.data service dispatcher at {host}:{port} has no worker after {timeout:.0f} s{problem}, "
                f"and its jobs would wait for one forever. Start workers with `keras-bert3 data-service worker "
                f"--dispatcher {join_address(host, port)}` (on hosts that see the corpus at the same paths), or "
                "train without --data-service."
            )
        time.sleep(0.5)


def join_address(host: str, port: int) -> str:
    """(host, port) to "host:port", an IPv6 host in brackets ("[::1]:5050")."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def parse_address(address: str) -> tuple[str, int]:
    """ "host:port", "[ipv6]:port" or "grpc://host:port" to (host, port).

    Example:
    >>> parse_address("grpc://[::1]:5050")
    ('::1', 5050)
    """
    bare = address.split("://", 1)[-1]
    host, _, port = bare.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"A tf.data service address is host:port (e.g. localhost:5050), got {address!r}.")
    return host.strip("[]"), int(port)


def check_servable(*, counters=None, file_format: str = "sentences") -> None:
    """Refuses what `tf.data` service workers cannot run: Python callbacks
    (counters) and the "paragraphs" format (its sentence splitter is Python).

    Example:
    >>> check_servable(file_format="sentences")  # Nothing to refuse.
    """
    if counters is not None:
        raise ValueError(
            "counters= cannot be used with a tf.data service: the counts are Python callbacks, "
            "and the service's workers run only TensorFlow ops. Count on a local pass instead."
        )
    if file_format != "sentences":
        raise ValueError(
            f"The {file_format!r} format splits sentences in Python, which tf.data service workers "
            "cannot run: convert the corpus to one sentence a line (or prepare shards with "
            "`keras-bert3 prepare-data --file-format paragraphs`) and serve that."
        )
