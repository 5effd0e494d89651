"""`Popen` and `run`, as `subprocess`'s, for the Python processes the tests
start (`python -m keras_bert3 pretrain ...`, `python -m MODULE`, `python -c CODE`,
`python SCRIPT.py`): the process is forked from a warm one of this test
process's (tests/warm_command_server.py, one per environment), which has done
the imports that every such process does first (TensorFlow, Keras, ...: 6-9 s
of CPU each), instead of starting a new interpreter. From there on it runs
its own code in a process of its own: its pid (in lock files and `.partial`
names), signals, exit status, stdin, stdout and stderr are as with `subprocess`
(tests/warm_commands_test.py).

Anything else (another program, Python options such as `-X`, `preexec_fn`, a
named moment in a module the warm process has imported) starts a new
interpreter, as `subprocess` does; so does every process under `--coverage`
(which measures each process from its start), or with
`KERAS_BERT3_WARM_COMMANDS=0` in the tests' environment. Tests of what a new
process does before its code runs (its imports, the `keras-bert3` launcher)
use `subprocess` itself.

A warm process is started for the first command of its environment and ends
with the test process; its own CPU (one interpreter's imports) is not charged
to any test by tests/cpu_times.py, the forked processes' is.
"""

import atexit
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading

from tests.named_moment import SITE
from tests.named_moment import moment_environment
from tests.named_moment import wait_for_the_moment
from tests.warm_command_server import VOLATILE

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWITCH = "KERAS_BERT3_WARM_COMMANDS"
MOST_SERVERS = 4  # Each holds ~1 GB; a command whose environment would need one more starts a new interpreter.

_servers = {}  # The server's environment, as sorted JSON -> (its process, its control socket).
_servers_lock = threading.Lock()
_ended_commands_cpu = [0.0]  # CPU seconds of the forked commands that have ended, for tests/cpu_times.py.
_forked_commands = [0]


def ended_commands_cpu() -> float:
    return _ended_commands_cpu[0]


def forked_commands() -> int:
    """How many commands this process has had forked."""
    return _forked_commands[0]


def forking(environment: dict | None = None) -> bool:
    """Whether commands with `environment` (this process's by default) are forked: not where the
    switch turns forking off, nor under coverage, which measures each process from its start."""
    environment = os.environ if environment is None else environment
    return (
        os.environ.get(SWITCH, "1") != "0"
        and not {"COVERAGE_PROCESS_START", "COVERAGE_PROCESS_CONFIG"} & environment.keys()
    )


def _warm(args, environment: dict) -> bool:
    """Whether `args` is `python -m MODULE ...`, `python -c CODE ...` or `python SCRIPT.py ...`
    with this interpreter and no options, and forked commands are on."""
    return (
        isinstance(args, (list, tuple))
        and len(args) >= 2
        and args[0] == sys.executable
        and (args[1] in ("-m", "-c") and len(args) >= 3 or str(args[1]).endswith(".py"))
        and forking(environment)
    )


def _server_environment(environment: dict) -> dict:
    environment = {name: value for name, value in environment.items() if name not in VOLATILE}
    path = [entry for entry in environment.get("PYTHONPATH", "").split(os.pathsep) if entry and entry != SITE]
    environment.pop("PYTHONPATH", None)
    return {**environment, **({"PYTHONPATH": os.pathsep.join(path)} if path else {})}


def _control_socket(environment: dict) -> socket.socket | None:
    """The control socket of the server for `environment`, started here where there is none yet
    (None where there are MOST_SERVERS already)."""
    with _servers_lock:  # Two threads of a test starting commands at once start one server.
        return _started_control_socket(_server_environment(environment))


def _started_control_socket(environment: dict) -> socket.socket | None:
    key = json.dumps(sorted(environment.items()))
    if key not in _servers and len(_servers) >= MOST_SERVERS:
        return None
    if key not in _servers:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with tempfile.TemporaryFile() as errors:
            server = subprocess.Popen(
                [sys.executable, "-m", "tests.warm_command_server", str(theirs.fileno())],
                cwd=REPO,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=errors,
                pass_fds=[theirs.fileno()],
                start_new_session=True,  # Ctrl-C in a terminal stops the tests, which then end it.
            )
            theirs.close()
            ready = server.stdout.readline()
            server.stdout.close()
            if ready != b"ready\n":
                errors.seek(0)
                raise RuntimeError(f"the warm command process ended (exit {server.wait()}): {errors.read()[-3000:]}")
        _servers[key] = (server, ours)
    return _servers[key][1]


@atexit.register
def _end_servers() -> None:
    """Closes each server's control socket (it kills what it still runs and ends), then waits for it."""
    for server, control in _servers.values():
        control.close()
        server.wait()
    _servers.clear()


class Popen(subprocess.Popen):
    """`subprocess.Popen`, whose Python processes are forked from a warm process. It overrides
    three private methods of CPython's `subprocess.Popen` (3.11: `_execute_child`, `_wait`,
    `_internal_poll`); another Python's may need them revisited.

    A forked process ends without the interpreter's teardown of its modules (see
    tests/warm_command_server.py's `run_and_end`); `teardown=True` keeps it, for a test of
    what a process does as it exits (a hang in a destructor)."""

    _status = None  # The command's socket to its server, while a forked command runs.

    def __init__(self, args, *arguments, teardown: bool = False, **keywords):
        self._teardown = teardown  # Read by _execute_child, which the constructor calls.
        super().__init__(args, *arguments, **keywords)

    def _execute_child(self, args, executable, preexec_fn, close_fds, pass_fds, cwd, env, *rest):
        # The rest, in subprocess's order: startupinfo, creationflags, shell, the six pipe ends, ...
        shell, (p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite) = rest[2], rest[3:9]
        environment = dict(os.environ if env is None else env)
        control = _warm(args, environment) and not (shell or executable or preexec_fn or pass_fds)
        control = control and _control_socket(environment)
        if control:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            request = {
                "arguments": [str(a) for a in args[1:]],
                "environment": environment,
                "folder": os.path.abspath(cwd or "."),
                "teardown": self._teardown,
            }
            standard = [fd if fd != -1 else own for fd, own in zip((p2cread, c2pwrite, errwrite), (0, 1, 2))]
            try:
                with theirs:  # Closed here once sent: the answer's socket ends where the warm process does.
                    socket.send_fds(control, [json.dumps(request).encode()], [*standard, theirs.fileno()])
                answer = json.loads(ours.recv(1 << 16) or b'{"refused": "the warm process ended"}')
            except OSError as error:  # The warm process has ended (killed for memory?): this one starts anew.
                answer = {"refused": str(error)}
            if "pid" in answer:
                self.pid, self._status, self._child_created = answer["pid"], ours, True
                _forked_commands[0] += 1
                self._close_pipe_fds(p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite)
                return
            ours.close()
        super()._execute_child(args, executable, preexec_fn, close_fds, pass_fds, cwd, env, *rest)

    def _ended(self) -> None:
        message = self._status.recv(1 << 16)
        if not message:
            raise RuntimeError(f"the warm process of command {self.pid} ended before it")
        message = json.loads(message)
        self.returncode = os.waitstatus_to_exitcode(message["status"])
        _ended_commands_cpu[0] += message["cpu"]
        self._status.close()
        self._status = None

    def _internal_poll(self, _deadstate=None, *args, **kwargs):
        if self._status is None:
            return super()._internal_poll(_deadstate, *args, **kwargs)
        if select.select([self._status], [], [], 0)[0]:
            self._ended()
        return self.returncode

    def _wait(self, timeout):
        if self._status is None:
            return super()._wait(timeout)
        if not select.select([self._status], [], [], timeout)[0]:
            raise subprocess.TimeoutExpired(self.args, timeout)
        self._ended()
        return self.returncode


def run(args, *, input=None, capture_output=False, timeout=None, check=False, **kwargs):
    """`subprocess.run` with this module's `Popen`."""
    if capture_output:
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    with Popen(args, **kwargs) as process:
        try:
            stdout, stderr = process.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
    completed = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    if check:
        completed.check_returncode()
    return completed


def started_and_waiting(command: list, moment: tuple[str, str], call: int, *, cwd, stderr=subprocess.PIPE):
    """`command` started in `cwd` (a text process, its stdout a pipe) and
    returned once it waits at the `call`th call of `moment`: there, SIGTERM
    and SIGINT reach its own handlers, and SIGUSR1 lets it go on."""
    process = Popen(
        command, cwd=cwd, env=moment_environment(moment, call, "wait"), stdout=subprocess.PIPE, stderr=stderr, text=True
    )
    wait_for_the_moment(process)
    return process
