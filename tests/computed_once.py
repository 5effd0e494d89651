"""Results that do not depend on the Keras backend, computed once per machine
for the same inputs: the suite runs once per backend (tests/run_all.sh, the
passes side by side), and the second pass to ask reads the first one's result
from a JSON file in the temporary directory, keyed by a hash of everything
the result depends on (a file lock makes a pass that asks while the other
computes wait for its result).

    accuracy = computed_once(json.dumps([texts, labels, torch.__version__]), lambda: {"accuracy": run()})
"""

import fcntl
import hashlib
import json
import os
import tempfile
from collections.abc import Callable

FOLDER = os.path.join(tempfile.gettempdir(), "keras_bert3_computed_once")


def computed_once(key: str, compute: Callable[[], object]):
    """`compute()` (a JSON value), or what it returned before for the same `key`."""
    path = os.path.join(FOLDER, hashlib.sha256(key.encode()).hexdigest() + ".json")
    os.makedirs(FOLDER, exist_ok=True)
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                return json.load(f)
        result = compute()
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(result, f)
        os.replace(path + ".tmp", path)
    return result


def source_of(*modules) -> str:
    """The source text of `modules`: in a key, a change to their code computes anew."""
    import inspect

    return "".join(inspect.getsource(module) for module in modules)
