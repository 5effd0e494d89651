"""Input computed by `tf.data` service workers: the trainer sends its input
pipeline (pretraining's, `keras_bert3.data`) to a dispatcher, CPU hosts pair,
tokenize and mask, the trainer only receives batches.

The dispatcher hands out the pipeline's source elements (the corpus's byte
ranges, or prepared shards) one at a time to whichever worker asks
(`ShardingPolicy.DYNAMIC`): each is read by one worker, a pass covers the
corpus once, and adding workers adds input rate. Start the servers with
`keras-bert3 data-service` (see `distribution/data_service_server`); they
need the corpus at the same paths (a shared file system or bucket).
"""

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
