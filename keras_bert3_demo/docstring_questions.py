"""An embedded SQuAD-style question answering set built from the standard
library's docstrings: real passages, real facts, no download.

Many public functions document themselves with a first sentence "Return
<something>." (`os.path.basename`: "Returns the final component of a
pathname"; `stat.S_ISDIR`: "Return True if mode is from a directory."). A
passage lists a few functions of one module as "name: first paragraph"; each
function gives the question "What does <name> return?" whose answer is the
<something> of its own sentence, so a model must find the right function in
the passage, then the span after its "Return". About 800 questions.
"""

import ast
import functools
import os
import random
import re
import sysconfig

from keras_bert3_demo.derived_cache import cached_json

_VERSION = 1  # Bump when the derivation changes: it names the cache file.
_RETURN = re.compile(r"Return (?P<answer>[^.]{3,80}?)\.(?:\s|$)")
_SKIPPED_DIRECTORIES = {"test", "tests", "idlelib", "site-packages", "lib2to3", "turtledemo", "__pycache__"}


def _functions(path: str) -> list[tuple[str, str]]:
    """(name, first paragraph) of the public functions of a file whose docstring opens with 'Return ...'."""
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name.startswith("_"):
            continue
        paragraph = " ".join((ast.get_docstring(node) or "").split("\n\n")[0].split())
        sentences = re.split(r"(?<=\.)\s+", paragraph)
        paragraph = " ".join(sentences[:2])  # The "Return ..." sentence and one more.
        if _RETURN.match(paragraph) and len(paragraph.split()) <= 50:
            found.append((node.name, paragraph))
    return list(dict.fromkeys(found))


@functools.lru_cache(maxsize=None)
def _documented_functions() -> tuple[tuple[tuple[str, str], ...], ...]:
    """Per standard library file, its functions that `_functions` keeps (parsed once per Python
    version and kept in the derived-corpora cache, then read once a process)."""

    def derive():
        return [_functions(path) for path in _stdlib_files()]

    files = cached_json("docstring_questions", _VERSION, derive)
    return tuple(tuple(tuple(function) for function in functions) for functions in files)


def _stdlib_files() -> list[str]:
    root = sysconfig.get_paths()["stdlib"]
    files = []
    for directory, subdirectories, names in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if d not in _SKIPPED_DIRECTORIES)
        files += [os.path.join(directory, name) for name in sorted(names) if name.endswith(".py")]
    return files


def docstring_questions(*, functions_per_passage: int = 2, test_fraction: float = 0.2, seed: int = 0) -> dict:
    """SQuAD-style train and test examples from the standard library's docstrings.

    Passages are split between train and test (no test passage is seen in
    training); the split is random with `seed`.

    Args:
        functions_per_passage: int. Functions of one module described in a passage.
        test_fraction: float. Share of the passages held out.
        seed: int. Shuffle seed.

    Returns:
        dict with `train` and `test`, each a dict of lists `question`,
        `context`, `answer_text`, `answer_start` (character index of the
        answer in the context), the fields `BertQuestionAnswerer.fit` takes.

    Example:
    >>> data = docstring_questions()
    >>> data["train"]["question"][0], data["train"]["answer_text"][0]
    ('What does get_build_version return?', 'the version of MSVC that was used to build Python')
    """
    rng = random.Random(seed)
    passages = []
    for functions in _documented_functions():
        names = [name for name, _ in functions]
        functions = [f for f in functions if names.count(f[0]) == 1]  # A name the question can point at.
        for i in range(0, len(functions) - functions_per_passage + 1, functions_per_passage):
            passages.append(functions[i : i + functions_per_passage])
    rng.shuffle(passages)
    test_size = int(len(passages) * test_fraction)
    splits = {"test": passages[:test_size], "train": passages[test_size:]}
    return {split: _examples(chosen) for split, chosen in splits.items()}


def _examples(passages) -> dict[str, list]:
    examples = {"question": [], "context": [], "answer_text": [], "answer_start": []}
    for functions in passages:
        context, starts = "", []
        for name, paragraph in functions:
            context += ("" if not context else " ") + f"{name}: "
            starts.append(len(context))
            context += paragraph
        for (name, paragraph), start in zip(functions, starts):
            answer = _RETURN.match(paragraph).group("answer")
            examples["question"].append(f"What does {name} return?")
            examples["context"].append(context)
            examples["answer_text"].append(answer)
            examples["answer_start"].append(start + len("Return "))
    return examples
