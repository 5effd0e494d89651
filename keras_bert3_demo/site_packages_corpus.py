"""A large real corpus derived on any machine with Python packages installed:
the prose of every installed package's docstrings, one document per
docstring (module, class or function), for tests and benchmarks at scale."""

import contextlib
import multiprocessing
import os
import sysconfig

from keras_bert3.data.sentence_splitter import split_sentences
from keras_bert3_demo.default_corpus import _SKIPPED_DIRS
from keras_bert3_demo.default_corpus import _is_prose
from keras_bert3_demo.derived_cache import derived_path
from keras_bert3_demo.docstring_scan import scanned_docstrings

_VERSION = 2  # Bump when the derivation changes: it names the cache file.


def site_packages_corpus_path(cache_dir: str | None = None, *, min_sentences: int = 1) -> str:
    """Writes (once) and returns a corpus file in the original BERT format made
    from the docstrings of the installed packages and the standard library
    (scanned as text, never imported, by `docstring_scan`; files in parallel): each docstring
    with at least `min_sentences` prose sentences is a document. Its size
    depends on what is installed: with this project's test dependencies
    (TensorFlow, JAX, PyTorch, transformers, ...) it is tens of MB in tens of
    thousands of documents, many of them a sentence or two, as real corpora have.

    Args:
        cache_dir: where to keep the file (default `$KERAS_BERT3_CACHE`, else
            `~/.cache/keras_bert3`).
        min_sentences: int. Shortest document kept.

    Example:
    >>> path = site_packages_corpus_path()
    >>> os.path.getsize(path) > 10_000_000  # doctest: +SKIP
    True
    """
    path = derived_path(f"site_packages_corpus-min{min_sentences}", _VERSION, ".txt", cache_dir)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with _exclusive(f"{path}.lock"):  # Concurrent callers wait for one derivation.
        if not os.path.exists(path):
            _write(path, min_sentences)
    return path


@contextlib.contextmanager
def _exclusive(lock_path: str):
    try:
        import fcntl
    except ImportError:  # Not POSIX: no lock, each caller may derive (the write is atomic).
        yield
        return
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _write(path: str, min_sentences: int) -> None:
    roots = sorted({sysconfig.get_paths()[key] for key in ("stdlib", "purelib", "platlib")})
    sources = [(source, min_sentences) for root in roots for source in _python_files(root)]
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as f, multiprocessing.get_context("spawn").Pool() as pool:
        for documents in pool.imap(_file_documents, sources, chunksize=64):
            f.writelines("\n".join(document) + "\n\n" for document in documents)
    os.replace(temporary, path)  # Atomic: a reader never sees half a file.


def _python_files(root: str) -> list[str]:
    """The .py files under `root`, in sorted order, tests left out (and
    site-packages below the standard library's root: it is a root of its own)."""
    paths = []
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if d not in _SKIPPED_DIRS)
        paths += [os.path.join(directory, name) for name in sorted(files) if name.endswith(".py")]
    return paths


def _file_documents(path_and_minimum) -> list[list[str]]:
    path, min_sentences = path_and_minimum
    try:
        with open(path, encoding="utf-8") as f:
            docstrings = scanned_docstrings(f.read())
    except (UnicodeDecodeError, OSError):
        return []
    documents = []
    for docstring in docstrings:
        sentences = []
        for paragraph in docstring.split("\n\n"):
            if _is_prose(paragraph):
                sentences.extend(s.replace("\n", " ") for s in split_sentences(paragraph))
        if len(sentences) >= min_sentences:
            documents.append(sentences)
    return documents
