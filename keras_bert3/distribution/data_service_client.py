"""Input computed by `tf.data` service workers (CPU hosts pair, tokenize and mask):
the dispatcher hands each source file to whichever worker asks (`ShardingPolicy.DYNAMIC`),
so a pass covers the corpus once and more workers add input rate. Start the servers
with `keras-bert3 data-service`; they need the corpus at the same paths."""

import tensorflow as tf

from keras_bert3.distribution.data_service_dispatcher import CONNECT_TIMEOUT_S
from keras_bert3.distribution.data_service_dispatcher import WORKER_TIMEOUT_S
from keras_bert3.distribution.data_service_dispatcher import check_dispatcher_answers
from keras_bert3.distribution.data_service_dispatcher import check_dispatcher_has_workers


def served_by_data_service(
    dataset: tf.data.Dataset,
    address: str,
    *,
    connect_timeout: float = CONNECT_TIMEOUT_S,
    worker_timeout: float = WORKER_TIMEOUT_S,
) -> tf.data.Dataset:
    """`dataset` (reading a list of files with TensorFlow ops only: no `py_function`, no generator) computed by the
    `tf.data` service workers of the dispatcher at `address` ("host:port" or "grpc://host:port"), each iteration a new
    job giving each example once, in no reproducible order. Raises `ConnectionError` where nothing answers within
    `connect_timeout` seconds, or no worker has registered after `worker_timeout`."""
    target = check_dispatcher_answers(address, connect_timeout)
    check_dispatcher_has_workers(address, worker_timeout)
    served = dataset.apply(
        tf.data.experimental.service.distribute(
            processing_mode=tf.data.experimental.service.ShardingPolicy.DYNAMIC, service=target
        )
    )
    return _each_pass_gives_something(served, address).prefetch(tf.data.AUTOTUNE)


def _each_pass_gives_something(dataset: tf.data.Dataset, address: str) -> tf.data.Dataset:
    """Raises at the end of a pass that gave no element: a worker sees only a part
    of the corpus, and `repeat()` over service input loops on empty passes."""
    empty = tf.nest.map_structure(
        lambda spec: tf.zeros([0 if size is None else size for size in spec.shape.as_list()], spec.dtype),
        dataset.element_spec,
    )
    marked = dataset.map(lambda *element: (element, False))
    marked = marked.concatenate(
        tf.data.Dataset.from_tensors((tuple(empty) if isinstance(empty, tuple) else (empty,), True))
    )
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
