"""A `tf.data` service dispatcher or worker in its own process, for
`pretraining_dataset(..., data_service=ADDRESS)`:

    keras-bert3 data-service dispatcher --port 5050
    keras-bert3 data-service worker --dispatcher HOST:5050     # on every CPU host

A worker loads tf-text's ops and must see the corpus at the trainer's paths. Each exits 0 at SIGTERM or Ctrl-C: a worker
at once, as its stop can wait on tasks that need the Python lock it holds."""

import os
import signal
import socket
import sys
import threading

STOP_SECONDS = 10


def serve(
    role: str,
    *,
    port: int = 0,
    dispatcher: str | None = None,
    worker_address: str | None = None,
    work_dir: str | None = None,
) -> None:
    """Runs a dispatcher or a worker (`role`) until SIGTERM / SIGINT. `port` 0: any free one. Workers: `dispatcher`
    "host:port", `worker_address` "host:port" or "host:%port%" (default: this host's name). Dispatchers: `work_dir`
    keeps state so that a restarted dispatcher resumes its jobs."""
    stop = threading.Event()  # Set first: a SIGTERM during the start-up still ends the process with 0.
    for signal_number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signal_number, lambda *_: stop.set())
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the tokenizer's ops in this process)

    from keras_bert3.distribution.data_service_dispatcher import join_address
    from keras_bert3.distribution.data_service_dispatcher import parse_address
    from keras_bert3.upstream.data_service_stop import stop_within

    service = tf.data.experimental.service
    if role == "dispatcher":
        config = service.DispatcherConfig(port=port, work_dir=work_dir, fault_tolerant_mode=work_dir is not None)
        server = service.DispatchServer(config)
    elif role == "worker":
        if dispatcher is None:
            raise ValueError("A worker needs --dispatcher HOST:PORT, the address of the dispatcher.")
        host, dispatcher_port = parse_address(dispatcher)
        config = service.WorkerConfig(
            dispatcher_address=join_address(host, dispatcher_port),
            worker_address=worker_address or f"{socket.gethostname()}:%port%",
            port=port,
        )
        server = service.WorkerServer(config)
    else:
        raise ValueError(f"role must be 'dispatcher' or 'worker', got {role!r}.")
    if role == "dispatcher":
        print(f"tf.data service dispatcher listening on port {server.target.rsplit(':', 1)[-1]}", flush=True)
    else:
        print(f"tf.data service worker serving the dispatcher at {config.dispatcher_address}", flush=True)
    while not stop.wait(0.5):
        pass
    print(f"tf.data service {role} stopping", flush=True)
    if role == "dispatcher":
        stop_within(server, STOP_SECONDS, f"tf.data service {role}")
    print(f"tf.data service {role} stopped", flush=True)
    sys.stderr.flush()
    # Not Python's own exit: it would stop the server again (its `__del__`) and can hang.
    os._exit(0)
