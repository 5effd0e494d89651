"""The TensorFlow that TF Serving runs, for the export tests: a virtual
environment with the TensorFlow and tf-text that the newest TF Serving release
builds in (TF Serving 2.20: tensorflow_serving/workspace.bzl pins tf-text 2.20,
on TensorFlow 2.20), while the library itself writes exports with TensorFlow
2.21. A SavedModel can carry ops or attributes an older runtime does not know
("NodeDef mentions attr ... not in Op", tensorflow/serving #1737), so every
export test loads and calls its export there (`tests/saved_model_client.py`).

The environment is built once per machine (about a minute; it is cached in
`~/.cache/keras_bert3`, or where `KERAS_BERT3_SERVING_RUNTIME` says). The
README's test command builds it before the passes start:

    python -m tests.serving_runtime   # prints the interpreter's path

With KERAS_BERT3_REQUIRE_REFERENCE=1 (CI) an environment that cannot be built
is an error; otherwise the export tests fall back to this interpreter.
"""

import fcntl
import os
import pathlib
import signal
import subprocess
import sys

TENSORFLOW_VERSION = "2.20.0"
PACKAGES = (
    f"tensorflow=={TENSORFLOW_VERSION}",
    "tensorflow-text==2.20.0",
    # The server's own parser of warm-up records (PredictionLog), to read them as it does.
    "tensorflow-serving-api==2.20.0",
)


def runtime_dir() -> pathlib.Path:
    default = pathlib.Path.home() / ".cache" / "keras_bert3" / f"tf-serving-runtime-{TENSORFLOW_VERSION}"
    return pathlib.Path(os.environ.get("KERAS_BERT3_SERVING_RUNTIME", default))


def serving_runtime_python() -> str:
    """The runtime's Python, built if missing (under a lock: the two test passes
    may ask at once). Falls back to this interpreter when it cannot be built,
    unless KERAS_BERT3_REQUIRE_REFERENCE=1, where that raises."""
    directory = runtime_dir()
    python = directory / "bin" / "python"
    ready = directory / "ready"
    directory.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{directory}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not ready.exists():
            try:
                _build(directory)
            except (OSError, subprocess.CalledProcessError) as error:
                if os.environ.get("KERAS_BERT3_REQUIRE_REFERENCE") == "1":
                    raise RuntimeError(f"Could not build the TF Serving runtime in {directory}: {error}") from error
                return sys.executable
            ready.write_text(" ".join(PACKAGES) + "\n")
    return str(python)


def _build(directory: pathlib.Path) -> None:
    """A fresh environment (a half-built one left by a killed build is replaced)."""
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(directory)], check=True)
    pip = [str(directory / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    pip.append("--no-compile")  # Python compiles what the export tests import, as they import it.
    subprocess.run([*pip, *PACKAGES], check=True)


if __name__ == "__main__":
    # Stopped (tests/run_all.sh or .ci/run ending early), it stops its pip too: SystemExit ends subprocess.run's wait,
    # which kills the child, and the half-built environment is replaced by the next build.
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    print(serving_runtime_python())
