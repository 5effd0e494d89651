"""The embedded default corpus: real English prose that every Python installation
ships, so tests and the demo need no download.

Two sources, both read from the running Python's standard library:
Python's reference documentation (`pydoc_data.topics`, 79 documents) and the
docstrings of the standard library's modules (one document per module: the
module's docstring, then its classes' and functions' docstrings in source order,
keeping only prose paragraphs), about 1.7 MB; derived once and cached
as a text file in the original BERT format (one sentence a line, a blank line
between documents).
"""

import ast
import collections
import os
import re
import sysconfig

from keras_bert3.data.sentence_splitter import split_sentences
from keras_bert3_demo.derived_cache import derived_path
from keras_bert3_demo.derived_cache import write_atomically
from keras_bert3_demo.python_docs_corpus import python_docs_documents

_VERSION = 1  # Bump when the derivation changes: it names the cache file.
_SKIPPED_DIRS = {"site-packages", "dist-packages", "test", "tests", "idle_test", "__pycache__", "pydoc_data"}
_WORD = re.compile(r"^[(\"'`]?[A-Za-z][a-z'-]*[)\"'`]?[.,;:!?]?$")


def default_corpus_path(cache_dir: str | None = None) -> str:
    """Returns the path of the default corpus file, writing it on first use.

    The file is in the original BERT format: one sentence a line, a blank line
    between documents. It is written to `cache_dir` (default: `$KERAS_BERT3_CACHE`,
    else `~/.cache/keras_bert3`) under a name that carries the Python version.

    Args:
        cache_dir: str or None. Where to keep the file.

    Returns:
        str, the file's path.

    Examples:

    >>> path = default_corpus_path()
    >>> open(path).readline()  # doctest: +SKIP
    """
    path = derived_path("default_corpus", _VERSION, ".txt", cache_dir)
    if not os.path.exists(path):
        write_atomically(path, "\n\n".join("\n".join(document) for document in _derive_documents()) + "\n")
    return path


def default_corpus_documents(cache_dir: str | None = None) -> list[list[str]]:
    """Returns the default corpus as documents, each a list of sentences.

    Deterministic for a given Python version (the text comes from its standard library).

    Args:
        cache_dir: str or None. See `default_corpus_path`.

    Examples:

    >>> documents = default_corpus_documents()
    >>> sum(len(s) for d in documents for s in d) > 1_000_000
    True
    """
    with open(default_corpus_path(cache_dir), encoding="utf-8") as f:
        return [block.split("\n") for block in f.read().strip("\n").split("\n\n")]


def stdlib_docstring_documents() -> list[list[str]]:
    """Returns the prose of the standard library's docstrings, one document per module.

    Modules are read with `ast` (never imported), in sorted path order; test
    packages are left out. A docstring paragraph is kept when it reads as prose:
    no doctest prompt, no indented code, at least six words, and at least 70% of
    them plain words.
    """
    documents = []
    for tree in stdlib_module_trees():
        sentences = []
        for node in _docstring_nodes(tree):
            docstring = ast.get_docstring(node)
            if docstring:
                for paragraph in docstring.split("\n\n"):
                    if _is_prose(paragraph):
                        sentences.extend(split_sentences(paragraph))
        if len(sentences) >= 2:
            documents.append(sentences)
    return documents


def stdlib_module_trees():
    """Yields the standard library's modules (test packages left out) as `ast`
    trees, in sorted path order; modules are parsed, never imported."""
    root = sysconfig.get_paths()["stdlib"]
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if d not in _SKIPPED_DIRS and not d.startswith("config-"))
        for name in sorted(f for f in files if f.endswith(".py")):
            try:
                with open(os.path.join(directory, name), encoding="utf-8") as f:
                    yield ast.parse(f.read())
            except (SyntaxError, UnicodeDecodeError, ValueError):
                continue


def _derive_documents() -> list[list[str]]:
    return python_docs_documents() + stdlib_docstring_documents()


def _docstring_nodes(tree: ast.Module):
    """The module, then its classes and functions, breadth first (`ast.walk`'s order). Only statements hold
    definitions, so the walk goes down through statements (and `except` and `case` clauses), not expressions."""
    yield tree
    pending = collections.deque([tree])
    while pending:
        for node in ast.iter_child_nodes(pending.popleft()):
            if isinstance(node, (ast.stmt, ast.excepthandler, ast.match_case)):
                if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield node
                pending.append(node)


def _is_prose(paragraph: str) -> bool:
    lines = paragraph.strip("\n").split("\n")
    if any(line.lstrip().startswith((">>>", "...", "$ ")) or line.startswith((" ", "\t")) for line in lines):
        return False
    words = paragraph.split()
    return len(words) >= 6 and sum(bool(_WORD.match(w)) for w in words) >= 0.7 * len(words)
