"""Where the corpora derived from this machine's Python are kept: a derivation
runs once per Python version and its result is read back afterwards.

    path = derived_path("default_corpus", 1, ".txt")  # ~/.cache/keras_bert3/default_corpus-python3.11.7-v1.txt
    examples = cached_json("docstring_topics", 1, derive_examples)
"""

import json
import os
import sys
from collections.abc import Callable


def cache_directory(cache_dir: str | None = None) -> str:
    """`cache_dir`, else `$KERAS_BERT3_CACHE`, else `~/.cache/keras_bert3`."""
    return cache_dir or os.environ.get("KERAS_BERT3_CACHE") or os.path.expanduser("~/.cache/keras_bert3")


def derived_path(name: str, version: int, suffix: str, cache_dir: str | None = None) -> str:
    """The file of derivation `name` (at derivation `version`) for the running Python."""
    python = ".".join(map(str, sys.version_info[:3]))
    return os.path.join(cache_directory(cache_dir), f"{name}-python{python}-v{version}{suffix}")


def write_atomically(path: str, text: str) -> None:
    """Writes `text` to `path` through a temporary file: concurrent writers leave one whole file."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(temporary, path)


def cached_json(name: str, version: int, derive: Callable[[], list]) -> list:
    """`derive()` (a JSON-serializable list), derived once per Python version and then read from the cache.

    Bump `version` when the derivation changes: it names the file.
    """
    path = derived_path(name, version, ".json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    derived = derive()
    write_atomically(path, json.dumps(derived))
    return derived
