"""A process that has imported what a `python -m keras_bert3` process imports
first (TensorFlow, Keras, tf-text, keras-hub, h5py; JAX under the JAX
backend) and forks a process for each command a test asks it to run
(tests/warm_commands.py). A forked process sets the test's stdin, stdout,
stderr, environment and folder, then runs `keras_bert3` as `python -m`
would: from there on it is the command's own code, as in a new interpreter,
less the 6-9 s of imports. It ends as Python ends a program, less the
interpreter's teardown of its modules (`run_and_end`), unless the request
asks for that teardown (tests of what a process does as it exits).

No `keras_bert3` module is imported here: a named moment (tests/named_moment.py)
wraps its function as the forked process imports the module, as in a new
interpreter. A moment in a module imported here is refused (the test then
starts a new interpreter), unless it is a class's method (`h5py:Group.create_dataset`),
which callers look up at each call.

Started by tests/warm_commands.py with one end of a socket pair (its file
descriptor the one argument); the environment it is started with is the one
its commands get, less the variables in VOLATILE. It writes "ready" on
stdout once it has imported; it ends, killing what it forked, when the other end closes.

Requests (one message each, SCM_RIGHTS carrying stdin, stdout, stderr and a
socket of the command's own): JSON {"arguments", "environment", "folder", "teardown"}.
On the command's socket it answers {"pid"} or {"refused": why}, then, when
the command ends, {"status": its wait status, "cpu": its CPU seconds}. Where
the command's socket closes first (the test process died), the command is killed.
"""

import atexit
import gc
import importlib
import json
import os
import runpy
import select
import signal
import socket
import sys
import threading
import types

from tests.named_moment import MOMENT_VARIABLE, SITE

# Variables a command reads after its imports, which may differ between the commands of one server.
VOLATILE = (
    "PYTEST_CURRENT_TEST",
    MOMENT_VARIABLE,
    "TF_CONFIG",  # TensorFlow's cluster, read by a multi-worker strategy.
    "KERAS_DISTRIBUTION_JOB_ADDRESSES",  # JAX's, read by keras.distribution.initialize().
    "KERAS_DISTRIBUTION_NUM_PROCESSES",
    "KERAS_DISTRIBUTION_PROCESS_ID",
    "XLA_FLAGS",  # Read as JAX's backend, or TensorFlow's first XLA program, starts.
    "KERAS_BERT3_ONE_PASS_CLAIMS",  # Read by tests/conftest.py, in a pytest run of a test's own.
)
PRELOADED = ("numpy", "h5py", "tensorflow", "tensorflow_text", "keras", "keras_hub", "safetensors", "matplotlib.pyplot")


def moment_refusal(environment: dict) -> str | None:
    """Why the environment's named moment cannot be set in a process forked from this one, or None."""
    if not environment.get(MOMENT_VARIABLE):
        return None
    module, attribute = json.loads(environment[MOMENT_VARIABLE])["at"].split(":")
    if module in sys.modules and "." not in attribute:
        return f"{module} is imported before the fork: callers may hold {attribute} itself"
    return None


def serve(control: socket.socket):
    """Answers requests until `control` closes; returns, in a forked process only, that process's request."""
    commands = {}  # pidfd -> (pid, the command's socket)
    sockets = {}  # the command's socket's fd -> pid
    while True:
        ready, _, _ = select.select([control, *commands, *sockets], [], [])
        for fd in ready:
            if fd is control:
                message, fds, _, _ = socket.recv_fds(control, 1 << 20, 4)
                if not message:
                    for pid, _ in commands.values():
                        os.kill(pid, signal.SIGKILL)
                    return None
                request = json.loads(message)
                stdin, stdout, stderr, reply = fds
                reply = socket.socket(fileno=reply)
                refused = moment_refusal(request["environment"])
                if refused:
                    reply.sendall(json.dumps({"refused": refused}).encode())
                    reply.close()
                    for descriptor in (stdin, stdout, stderr):
                        os.close(descriptor)
                    continue
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    _keep_only_the_commands_descriptors(control, commands, reply, (stdin, stdout, stderr))
                    return request
                for descriptor in (stdin, stdout, stderr):
                    os.close(descriptor)
                reply.sendall(json.dumps({"pid": pid}).encode())
                pidfd = os.pidfd_open(pid)
                commands[pidfd] = (pid, reply)
                sockets[reply.fileno()] = pid
            elif fd in commands:
                pid, reply = commands.pop(fd)
                sockets.pop(reply.fileno(), None)
                os.close(fd)
                _, status, usage = os.wait4(pid, 0)
                try:
                    reply.sendall(json.dumps({"status": status, "cpu": usage.ru_utime + usage.ru_stime}).encode())
                except OSError:
                    pass  # The test process is gone.
                reply.close()
            else:  # A command's socket closed before its command ended: its test process is gone.
                os.kill(sockets.pop(fd), signal.SIGKILL)


def _keep_only_the_commands_descriptors(control, commands: dict, reply, standard: tuple) -> None:
    """In a forked process: closes the server's sockets and the other commands',
    and makes the request's descriptors its stdin, stdout and stderr."""
    control.close()
    reply.close()
    for pidfd, (_, other) in commands.items():
        os.close(pidfd)
        other.close()
    for descriptor, target in zip(standard, (0, 1, 2)):
        os.dup2(descriptor, target)
    for descriptor in set(standard) - {0, 1, 2}:
        os.close(descriptor)


def run_command(request: dict) -> None:
    """Turns this forked process into `python ARGUMENTS` (`-m MODULE ...`, `-c CODE ...` or
    `SCRIPT ...`), run in the request's folder and environment."""
    os.environ.clear()
    os.environ.update(request["environment"])
    os.chdir(request["folder"])
    first, *rest = request["arguments"]
    # sys.path[0] as Python sets it: the folder for `-m`, "" for `-c`, the script's folder.
    sys.path[0] = {"-m": os.getcwd(), "-c": ""}.get(first, os.path.dirname(os.path.abspath(first)))
    if SITE in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        sys.path.insert(1, SITE)
        runpy.run_path(os.path.join(SITE, "sitecustomize.py"), run_name="sitecustomize")
    if first == "-m":
        sys.argv = ["-m", *rest[1:]]
        runpy.run_module(rest[0], run_name="__main__", alter_sys=True)
    elif first == "-c":
        sys.argv = ["-c", *rest[1:]]
        main = types.ModuleType("__main__")
        sys.modules["__main__"] = main
        exec(compile(rest[0], "<string>", "exec"), main.__dict__)
    else:
        sys.argv = [first, *rest]
        runpy.run_path(first, run_name="__main__")


def run_and_end(request: dict) -> None:
    """Runs the command, then ends this process as Python ends a program (the exit status of its
    `SystemExit`, or 1 for an uncaught exception, printed by `sys.excepthook`, and SIGINT for an
    uncaught KeyboardInterrupt; non-daemon threads joined, `atexit` functions run, the standard
    streams flushed) but with `os._exit`, without the interpreter's teardown of its modules: that
    teardown writes to most of the objects the warm process imported, and so copies their pages
    (0.6 s of CPU for `python -c pass`, 0.07 s without it). Objects left to be closed by that
    teardown are not: a file must be closed by the code that wrote it."""
    interrupted = False
    try:
        run_command(request)
        status = 0
    except SystemExit as stop:
        status = _exit_status(stop.code)
    except BaseException as error:  # noqa: BLE001 (every exception, as Python prints an uncaught one)
        sys.excepthook(type(error), error, error.__traceback__)
        interrupted, status = isinstance(error, KeyboardInterrupt), 1
    threading._shutdown()  # What Python's own ending does first, then the atexit functions.
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            status = 120  # Python's status where its last flush fails.
    if interrupted:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(status)


def _exit_status(code) -> int:
    """The exit status Python gives `sys.exit(code)`."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


if __name__ == "__main__":
    control_socket = socket.socket(fileno=int(sys.argv[1]))
    for name in PRELOADED:
        importlib.import_module(name)
    assert not [name for name in sys.modules if name.startswith("keras_bert3")], "keras_bert3 imported before the fork"
    # What is imported now is never collected: a forked process's collections and its exit
    # then leave those objects' pages shared instead of copying them (2.2 -> 0.6 s of CPU for `--help`).
    gc.freeze()
    print("ready", flush=True)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    forked_request = serve(control_socket)
    if forked_request is not None:  # With "teardown", Python's own ending follows the command's.
        (run_command if forked_request["teardown"] else run_and_end)(forked_request)
