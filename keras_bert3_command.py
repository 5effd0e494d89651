"""The `keras-bert3` command: runs the command line (`python -m keras_bert3`)
in a child process and keeps the C++ log lines of TensorFlow, XLA and Abseil
(and Apache Beam's start-up lines) out of the terminal; everything else the
child writes passes through.

Those lines (`I0000 ...`, `W0000 ...`, `E0000 ... failed call to cuInit` on a
machine without a GPU, and Abseil's "All log messages before
absl::InitializeLog() is called are written to STDERR") are written before any
setting can silence them (`TF_CPP_MIN_LOG_LEVEL` no longer does), and read like
failures. Errors a user can cause are the command's own one-line messages;
anything else is a Python traceback, which passes through.

The lines show with `--debug`, `KERAS_BERT3_DEBUG=1`, or where the user set
`TF_CPP_MIN_LOG_LEVEL`: the command then runs unfiltered. This module sits
outside the `keras_bert3` package so that its process imports neither
TensorFlow nor JAX.
"""

import os
import re
import signal
import subprocess
import sys

# Abseil's log line prefix: severity and date (MMDD), time, thread, file:line.
NATIVE_LOG_LINE = re.compile(
    rb"^(WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR"
    rb"|[IWE]\d{4} \d\d:\d\d:\d+\.\d+ +\d+ [\w./+-]+:\d+\] )"
)
# What Apache Beam's processes (`prepare-data --beam`) log at start-up, before the
# log level asked of their worker harness applies: a handler's creation, and a
# warning about Google Cloud client libraries that the DirectRunner does not use.
BEAM_START_UP_LINE = re.compile(rb"^(INFO:__main__:Logging handler created\.|WARNING:root:apitools not found, )")
# Signals passed on to the command's process: stop requests, and the terminal's hang-up.
FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# The second line of TensorFlow's CPU-instructions message, which is not indented.
CONTINUATION = re.compile(
    rb"^To enable the following instructions: .* rebuild TensorFlow with the appropriate compiler flags"
)


def main() -> int:
    arguments = sys.argv[1:]
    command = [sys.executable, "-m", "keras_bert3", *arguments]
    asked = "--debug" in arguments or os.environ.get("KERAS_BERT3_DEBUG", "") not in ("", "0")
    if asked or "TF_CPP_MIN_LOG_LEVEL" in os.environ:
        os.execv(sys.executable, command)
    # The child runs in a session of its own, so that each signal reaches it
    # once, from here: Ctrl-C (which the terminal sends to this process's process group),
    # and SIGTERM from a scheduler (Kubernetes signals this process alone). On
    # SIGTERM or SIGINT, training finishes its step and writes a checkpoint first.
    with subprocess.Popen(command, stderr=subprocess.PIPE, start_new_session=True) as child:
        for number in FORWARDED_SIGNALS:
            signal.signal(number, lambda number, frame: child.send_signal(number))
        forward_without_native_logs(child.stderr, sys.stderr.buffer)
    # Leaving the block closed the pipe and waited for the child.
    return 128 - child.returncode if child.returncode < 0 else child.returncode


def forward_without_native_logs(source, target) -> None:
    """Copies lines from `source` to `target` (binary streams), leaving out
    native log lines and the indented lines that continue them."""
    dropping = False
    for line in iter(source.readline, b""):
        if NATIVE_LOG_LINE.match(line) or BEAM_START_UP_LINE.match(line):
            dropping = True
            continue
        if dropping and (line[:1] in (b"\t", b" ") or CONTINUATION.match(line)):
            continue
        dropping = False
        target.write(line)
        target.flush()


if __name__ == "__main__":
    sys.exit(main())
