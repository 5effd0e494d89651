"""Stopping a `tf.data` service server in bounded time: TensorFlow stops one only
in its destructor, and a worker's stop waits for its tasks.

Private API (TensorFlow): `tf.data.experimental.service.DispatchServer._stop()`
and `WorkerServer._stop()` (tensorflow/python/data/experimental/service/server_lib.py)."""

import logging
import os
import sys
import threading

import tensorflow as tf

from keras_bert3.upstream.private_api import require_private

LOGGER = logging.getLogger(__name__)

for _server_class in (tf.data.experimental.service.DispatchServer, tf.data.experimental.service.WorkerServer):
    require_private(
        _server_class, "_stop", package=tf, why="stopping a tf.data service server before the process exits"
    )


def stop_within(server, seconds: float, name: str) -> None:
    """Stops `server`, or after `seconds` logs it and ends the process with exit code 0: a worker holds nothing that is
    lost, a dispatcher with a `work_dir` journals each change, and Python's own exit would wait on the server again."""
    stopping = threading.Thread(target=server._stop, name=f"stop {name}", daemon=True)
    stopping.start()
    stopping.join(seconds)
    if stopping.is_alive():
        LOGGER.warning(f"{name} had not stopped after {seconds:.0f} s (a task it runs did not end); exiting without it")
        sys.stderr.flush()
        os._exit(0)
