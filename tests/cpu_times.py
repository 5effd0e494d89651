"""The CPU each test costs, its own process's and that of the processes it
started, for `bash tests/run_all.sh --cpu-times`: where `--durations` gives a
test's wall time, which the other pass's load stretches, this gives what the
test itself spends, the processes it starts included (the kill chain's ten
`keras-bert3 pretrain` runs, a worker pair, a bench).

As a pytest plugin (`-p tests.cpu_times`, with `KERAS_BERT3_CPU_TIMES` naming a
folder), appends to the folder's `cpu-times-BACKEND.tsv` one row per test:
backend, test id, "ran" or "skipped", wall seconds, CPU seconds of the test
process, CPU seconds of its children, setup and teardown included.
A child's CPU counts once the test has waited for it, as `subprocess.run` and
`Popen.wait` do; a process that outlives its test (the serving runtime that
a session shares) is not counted.

    python -m tests.cpu_times FOLDER   # totals per pass, then the 40 costliest tests
"""

import collections
import glob
import os
import resource
import sys
import time

import pytest

from tests import warm_commands

FOLDER_VARIABLE = "KERAS_BERT3_CPU_TIMES"


def _clock() -> tuple[float, float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    forked = warm_commands.ended_commands_cpu()  # Processes forked for this one by its warm processes.
    return time.monotonic(), own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime + forked


_skipped = set()  # Tests skipped in this pass (a one-pass test the other pass runs, a marker's skip).


def pytest_runtest_logreport(report):
    if report.skipped:
        _skipped.add(report.nodeid)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    before = _clock()
    yield
    after = _clock()
    wall, own, children = (b - a for a, b in zip(before, after))
    backend = os.environ.get("KERAS_BACKEND", "")
    ran = "skipped" if item.nodeid in _skipped else "ran"
    with open(os.path.join(os.environ[FOLDER_VARIABLE], f"cpu-times-{backend}.tsv"), "a", encoding="utf-8") as out:
        out.write(f"{backend}\t{item.nodeid}\t{ran}\t{wall:.2f}\t{own:.2f}\t{children:.2f}\n")


def report(folder: str, top: int = 40) -> None:
    """Prints each pass's wall and CPU seconds, then the `top` tests by CPU, both passes summed."""
    paths = sorted(glob.glob(os.path.join(folder, "cpu-times-*.tsv")))
    if not paths:
        print(f"No CPU times in {folder}: no test ran.")
        return
    passes = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
    tests = collections.defaultdict(lambda: [0.0, 0.0, set()])
    for path in paths:
        with open(path, encoding="utf-8") as rows:
            for row in rows:
                backend, test, ran, wall, own, children = row.rstrip("\n").split("\t")
                for column, value in enumerate((wall, own, children)):
                    passes[backend][column] += float(value)
                tests[test][0] += float(own)
                tests[test][1] += float(children)
                if ran == "ran":
                    tests[test][2].add(backend)
    for backend, (wall, own, children) in passes.items():
        print(
            f"{backend} pass: tests' wall {wall:,.0f} s, CPU {own:,.0f} s own + {children:,.0f} s of started processes"
        )
    print(f"\nThe {top} costliest tests (CPU seconds, both passes):")
    print(f"{'all':>7} {'own':>7} {'started':>7}  passes  test")
    ranked = sorted(tests.items(), key=lambda item: -(item[1][0] + item[1][1]))
    for test, (own, children, backends) in ranked[:top]:
        print(f"{own + children:7.1f} {own:7.1f} {children:7.1f}  {'+'.join(sorted(backends)) or '-':6}  {test}")


if __name__ == "__main__":
    report(sys.argv[1])
