"""An embedded labelled text set: sentences of the standard library's
docstrings, labelled with the family of the module they document.

Real English prose that ships with every Python, so fine-tuning tests, the
benchmark and the demo need no download. Six classes (internet and email,
concurrency, text and markup, numbers and dates, files and the OS,
development tools); a few thousand sentences. The words naming a module of
the sentence's own family (e.g. "asyncio", "urllib") are replaced by
"module", so the label is not given away by a name.
"""

import ast
import functools
import os
import random
import re
import sysconfig

from keras_bert3.data.sentence_splitter import split_sentences
from keras_bert3_demo.default_corpus import _docstring_nodes
from keras_bert3_demo.default_corpus import _is_prose
from keras_bert3_demo.derived_cache import cached_json

_VERSION = 1  # Bump when the derivation changes: it names the cache file.

# Family -> top-level modules or packages of the standard library.
DOCSTRING_TOPICS = {
    "internet": [
        "email",
        "http",
        "urllib",
        "xmlrpc",
        "smtplib",
        "imaplib",
        "poplib",
        "ftplib",
        "mailbox",
        "mimetypes",
        "nntplib",
        "socketserver",
        "ssl",
        "socket",
        "ipaddress",
        "wsgiref",
        "webbrowser",
    ],
    "concurrency": [
        "asyncio",
        "concurrent",
        "multiprocessing",
        "threading",
        "subprocess",
        "sched",
        "queue",
        "selectors",
        "signal",
        "_threading_local",
    ],
    "text": [
        "re",
        "string",
        "textwrap",
        "difflib",
        "html",
        "xml",
        "json",
        "csv",
        "gettext",
        "locale",
        "codecs",
        "encodings",
        "configparser",
        "shlex",
        "tomllib",
        "_markupbase",
    ],
    "numbers": [
        "decimal",
        "_pydecimal",
        "fractions",
        "statistics",
        "random",
        "numbers",
        "datetime",
        "_pydatetime",
        "calendar",
        "heapq",
        "bisect",
        "collections",
        "_strptime",
        "colorsys",
        "zoneinfo",
    ],
    "files": [
        "os",
        "pathlib",
        "shutil",
        "tempfile",
        "glob",
        "fnmatch",
        "zipfile",
        "tarfile",
        "gzip",
        "bz2",
        "lzma",
        "filecmp",
        "stat",
        "ntpath",
        "posixpath",
        "genericpath",
        "fileinput",
        "io",
        "_pyio",
        "dbm",
        "shelve",
        "zipimport",
        "mmap",
        "netrc",
    ],
    "tools": [
        "unittest",
        "ast",
        "inspect",
        "dis",
        "pdb",
        "pydoc",
        "doctest",
        "typing",
        "importlib",
        "pickle",
        "tokenize",
        "traceback",
        "logging",
        "argparse",
        "bdb",
        "trace",
        "profile",
        "cProfile",
        "pstats",
        "timeit",
        "warnings",
        "dataclasses",
        "functools",
        "abc",
        "enum",
        "copy",
        "pickletools",
        "symtable",
        "tabnanny",
        "compileall",
        "py_compile",
        "modulefinder",
        "pkgutil",
        "runpy",
    ],
}


def _module_files(root: str, name: str) -> list[str]:
    package = os.path.join(root, name)
    if os.path.isdir(package):
        return sorted(
            os.path.join(directory, f)
            for directory, subdirectories, files in os.walk(package)
            if "test" not in os.path.relpath(directory, root).split(os.sep)
            and "tests" not in os.path.relpath(directory, root).split(os.sep)
            for f in files
            if f.endswith(".py")
        )
    path = package + ".py"
    return [path] if os.path.isfile(path) else []


def _sentences(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return []
    sentences = []
    for node in _docstring_nodes(tree):
        docstring = ast.get_docstring(node)
        for paragraph in (docstring or "").split("\n\n"):
            if _is_prose(paragraph):
                sentences.extend(split_sentences(paragraph))
    return sentences


@functools.cache
def _labelled_sentences(min_words: int) -> tuple[tuple[str, int], ...]:
    """(sentence, label) pairs, sorted; derived once per Python version, then read from the cache."""
    derive = functools.partial(_derive_labelled_sentences, min_words)
    return tuple(map(tuple, cached_json(f"docstring_topics-min{min_words}", _VERSION, derive)))


def _derive_labelled_sentences(min_words: int) -> list[tuple[str, int]]:
    root = sysconfig.get_paths()["stdlib"]
    seen: dict[str, int] = {}
    for label, modules in enumerate(DOCSTRING_TOPICS.values()):
        names = re.compile(r"\b(?:%s)\b(?:\.\w+)*" % "|".join(re.escape(m) for m in modules), re.IGNORECASE)
        for module in modules:
            for path in _module_files(root, module):
                for sentence in _sentences(path):
                    sentence = " ".join(names.sub("module", sentence).split())
                    if len(sentence.split()) < min_words:
                        continue
                    if seen.setdefault(sentence, label) != label:
                        seen[sentence] = -1  # In two families: ambiguous.
    return sorted((s, label) for s, label in seen.items() if label >= 0)


def docstring_topics(*, test_fraction: float = 0.2, seed: int = 0, min_words: int = 5) -> dict:
    """The standard library's docstring sentences labelled by module family.

    Each sentence appears once (a sentence found in two families is dropped);
    the split into train and test is random with `seed`. The sentences are
    derived once per Python version and kept next to the default corpus
    (`$KERAS_BERT3_CACHE`, else `~/.cache/keras_bert3`).

    Args:
        test_fraction: float. Share of the sentences held out for testing.
        seed: int. Shuffle seed.
        min_words: int. Shorter sentences are dropped.

    Returns:
        dict with `train_texts`, `train_labels`, `test_texts`, `test_labels`
        (lists; labels are ints) and `class_names` (list of str).

    Example:
    >>> data = docstring_topics()
    >>> data["class_names"]
    ['internet', 'concurrency', 'text', 'numbers', 'files', 'tools']
    """
    examples = list(_labelled_sentences(min_words))
    random.Random(seed).shuffle(examples)
    test_size = int(len(examples) * test_fraction)
    test, train = examples[:test_size], examples[test_size:]
    return {
        "train_texts": [s for s, _ in train],
        "train_labels": [label for _, label in train],
        "test_texts": [s for s, _ in test],
        "test_labels": [label for _, label in test],
        "class_names": list(DOCSTRING_TOPICS),
    }
