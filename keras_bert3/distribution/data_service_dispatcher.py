"""Reaching a `tf.data` service dispatcher: its address, and checks that it
answers and has workers before a run sends it a job."""

import socket
import time

import grpc

from keras_bert3.upstream.data_service_workers import registered_workers

# `tf.data` service itself retries an unreachable dispatcher for an hour.
CONNECT_TIMEOUT_S = 10.0
# A worker registers seconds after it starts; a job without one waits forever.
WORKER_TIMEOUT_S = 60.0


def check_dispatcher_answers(address: str, timeout: float = CONNECT_TIMEOUT_S) -> str:
    """Connects to the dispatcher at `address`, retrying for `timeout` seconds;
    returns the service target "grpc://host:port". Raises `ValueError` where
    `address` is not "host:port", `ConnectionError` where nothing answers."""
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
    """Waits up to `timeout` seconds for a worker to register with the dispatcher at
    `address`; returns their addresses, or raises `ConnectionError`."""
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
    """ "host:port", "[ipv6]:port" or "grpc://host:port" to (host, port)."""
    bare = address.split("://", 1)[-1]
    host, _, port = bare.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"A tf.data service address is host:port (e.g. localhost:5050), got {address!r}.")
    return host.strip("[]"), int(port)
