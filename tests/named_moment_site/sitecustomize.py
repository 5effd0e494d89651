"""Stops a Python process at a named moment, for tests of signals and kills.

With this folder on PYTHONPATH and `KERAS_BERT3_TEST_MOMENT` set (JSON, made
by `tests.named_moment.moment_environment`), the process wraps one function
when its module is imported, and at the function's Nth call (N counts from
the process's start), before it runs or after, does one thing:

    kill     SIGKILL itself: what a crash, an OOM kill or a lost host leaves
    sigterm  SIGTERM itself: what a scheduler's preemption sends
    wait     print `MOMENT_REACHED` on stdout, then wait for the test's signal:
             SIGTERM or SIGINT, which the process's own handler then takes
             (the signal arrives at exactly this moment), or SIGUSR1, which
             only says to go on (the test has done what it needed done here)

What runs, and what is on disk when the process stops, is the command's own:
the wrapper only chooses the moment. Processes without the variable (the
`keras-bert3` launcher among them, which imports no wrapped module) run as usual.
"""

import importlib.abc
import importlib.util
import json
import os
import select
import signal
import sys

MOMENT_VARIABLE = "KERAS_BERT3_TEST_MOMENT"
MOMENT_REACHED = "KERAS_BERT3_TEST_MOMENT_REACHED"


def _act(then: str) -> None:
    if then == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif then == "sigterm":
        os.kill(os.getpid(), signal.SIGTERM)
    elif then == "wait":
        _wait_for_a_signal()
    else:
        raise ValueError(f"{MOMENT_VARIABLE}: unknown action {then!r}")


def _wait_for_a_signal() -> None:
    """Announces the moment, then blocks until SIGTERM or SIGINT arrives,
    which the handlers in place (the process's own) then take as usual, or
    SIGUSR1, which is taken here."""
    read_end, write_end = os.pipe()  # The handler writes a byte; `select` wakes (no lock a handler could block on).
    previous = {}

    def handle(number, frame):
        os.write(write_end, b"x")
        if number == signal.SIGUSR1:
            return
        handler = previous[number]
        if callable(handler):
            handler(number, frame)
        elif handler == signal.SIG_DFL:
            signal.signal(number, signal.SIG_DFL)
            os.kill(os.getpid(), number)

    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1):
        previous[number] = signal.signal(number, handle)
    try:
        print(MOMENT_REACHED, flush=True)
        if not select.select([read_end], [], [], 600)[0]:
            raise TimeoutError(f"{MOMENT_VARIABLE}: no signal came in 600 s")
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        os.close(read_end)
        os.close(write_end)


def _wrap(module, attribute: str, call: int, when: str, then: str) -> None:
    owner = module
    *path, name = attribute.split(".")
    for part in path:
        owner = getattr(owner, part)
    original = getattr(owner, name)
    calls = [0]

    def at_the_moment(*args, **kwargs):
        calls[0] += 1
        if when == "before" and calls[0] == call:
            _act(then)
        result = original(*args, **kwargs)
        if when == "after" and calls[0] == call:
            _act(then)
        return result

    setattr(owner, name, at_the_moment)


class _WrapOnImport(importlib.abc.MetaPathFinder):
    """Finds the moment's module as usual and wraps its function once the module has run."""

    def __init__(self, moment: dict):
        self.moment = moment
        self.module, self.attribute = moment["at"].split(":")

    def find_spec(self, name, path=None, target=None):
        if name != self.module:
            return None
        sys.meta_path.remove(self)  # Found once; the normal finders do the finding.
        spec = importlib.util.find_spec(name)
        execute = spec.loader.exec_module

        def execute_and_wrap(module):
            execute(module)
            _wrap(module, self.attribute, self.moment["call"], self.moment["when"], self.moment["then"])

        spec.loader.exec_module = execute_and_wrap
        return spec


if os.environ.get(MOMENT_VARIABLE):
    _finder = _WrapOnImport(json.loads(os.environ[MOMENT_VARIABLE]))
    if _finder.module in sys.modules:  # A process forked after its import (tests/warm_command_server.py).
        _moment = _finder.moment
        _wrap(sys.modules[_finder.module], _finder.attribute, _moment["call"], _moment["when"], _moment["then"])
    else:
        sys.meta_path.insert(0, _finder)
