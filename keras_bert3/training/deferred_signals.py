"""Termination signals held back while training, so that it can finish its
step and write a checkpoint before the process ends."""

import signal
import threading

# What Kubernetes and SLURM send before they stop a job, and Ctrl-C.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class DeferredSignals:
    """While its `with` block runs, SIGTERM and SIGINT are recorded in `received` (the first one's number; None before)
    instead of ending the process, for `ResumableBackup(stop_on=...)`. A second SIGINT raises KeyboardInterrupt, as
    Ctrl-C twice should. Outside the main thread it holds nothing back."""

    def __init__(self, signals=STOP_SIGNALS):
        self.signals = tuple(signals)
        self.received = None
        self._previous = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for number in self.signals:
                self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *exc_info):
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous.clear()

    def _handle(self, number, frame):
        if self.received is None:
            self.received = number
        elif number == signal.SIGINT:
            raise KeyboardInterrupt


class TrainingStopped(Exception):
    """Training stopped at a signal after writing a checkpoint; the process should
    exit with `exit_code`, 128 + the signal's number, as a shell reports it."""

    def __init__(self, signal_number: int, step: int, checkpoint: str):
        self.signal_number = signal_number
        self.exit_code = 128 + signal_number
        self.checkpoint = checkpoint
        super().__init__(
            f"Stopped by {signal.Signals(signal_number).name} at step {step:,}: wrote the checkpoint "
            f"{checkpoint}. Run the same command to resume from it."
        )
