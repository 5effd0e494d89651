"""`DeferredSignals`: while training runs, SIGTERM and SIGINT are recorded for
the run to act on at the end of its step; a second Ctrl-C ends it at once, and
the handlers before it come back. (What a run does with them, through the
command: tests/training/pretraining_run_test.py.)"""

import os
import signal

import pytest

from keras_bert3.training.deferred_signals import DeferredSignals

pytestmark = pytest.mark.backend_free  # Python's signal handling only.


def test_stop_signals_are_recorded_a_second_ctrl_c_interrupts_and_the_handlers_come_back():
    before = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGINT)}
    with DeferredSignals() as stop:
        assert stop.received is None
        os.kill(os.getpid(), signal.SIGTERM)  # Recorded; the process goes on.
        os.kill(os.getpid(), signal.SIGTERM)  # More SIGTERMs change nothing.
        assert stop.received == signal.SIGTERM
        with pytest.raises(KeyboardInterrupt):  # Ctrl-C after a stop signal: at once.
            os.kill(os.getpid(), signal.SIGINT)
    assert {number: signal.getsignal(number) for number in before} == before
    with DeferredSignals() as stop:
        os.kill(os.getpid(), signal.SIGINT)  # A first Ctrl-C is recorded like SIGTERM.
    assert stop.received == signal.SIGINT
