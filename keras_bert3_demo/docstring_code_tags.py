"""An embedded token-tagging set: sentences of Python's reference
documentation and of the standard library's docstrings whose code spans are
tagged, word by word, after their markup is removed.

Both sources ship with every Python and mark code: the reference
documentation (`pydoc_data.topics`, Sphinx's text rendering of the reST
sources) writes every ``literal`` as "literal" in straight double quotes
(prose quotes are typographic there), and docstrings use reST and markdown
markup: ``literal``, :func:`name` (any role), `name`. Every sentence of
the reference's prose paragraphs, and of the docstring paragraphs that use
backticks (the others do not mark their code), becomes an example: the
markup is removed, the sentence is split into words at whitespace, and each
word is tagged B-CODE (a code span starts in it), I-CODE (it continues a
span) or O. The tagger must tell code from prose without the quotes and
backticks: real text, no download.
"""

import ast
import random
import re
import textwrap
from pydoc_data import topics

from keras_bert3.data.sentence_splitter import split_sentences
from keras_bert3_demo.default_corpus import _docstring_nodes
from keras_bert3_demo.default_corpus import stdlib_module_trees
from keras_bert3_demo.derived_cache import cached_json

CODE_TAGS = ["O", "B-CODE", "I-CODE"]
MIN_WORDS = 4  # Shorter sentences are dropped.
_VERSION = 1  # Bump when the derivation changes: it names the cache file.

# Docstrings: ``literal``, :role:`text` (":func:", ":py:meth:", ...), `text`; never across a backtick.
DOCSTRING_CODE = re.compile(r"``([^`]+?)``|(?::[\w.+-]+)+:`([^`]+?)`|`([^`]+?)`")
# The reference documentation: "literal" (straight quotes; prose uses typographic ones).
REFERENCE_CODE = re.compile(r'"([^"\s][^"]*?)"')
_ROLE_TARGET = re.compile(r"^(.*?)\s*<[^<>]*>$")  # :ref:`the text <target>` shows "the text".
_HEADING = re.compile(r"^\s*([*=\-~^])\1{3,}\s*$")


def strip_code_markup(sentence: str, code_span: re.Pattern = DOCSTRING_CODE) -> tuple[list[str], list[int]]:
    """Removes the code markup of one sentence and tags its whitespace words.

    A word is B-CODE when a code span starts in it, I-CODE when it only
    continues one, O otherwise (punctuation glued to a span stays in its word).

    Args:
        sentence: str. A sentence with code spans.
        code_span: a regular expression whose first non-None group is a span's text.

    Returns:
        `(words, tags)`: the words of the sentence without markup (split at
        whitespace) and one tag id per word (indices into `CODE_TAGS`).

    Example:
    >>> strip_code_markup("Call :func:`os.walk` on ``top`` first.")
    (['Call', 'os.walk', 'on', 'top', 'first.'], [0, 1, 0, 1, 0])
    """
    text, spans, position = [], [], 0
    for match in code_span.finditer(sentence):
        text.append(sentence[position : match.start()])
        code = next(group for group in match.groups() if group is not None)
        target = _ROLE_TARGET.match(code)
        code = (target.group(1) if target and target.group(1) else code).lstrip("~!").strip()
        start = sum(map(len, text))
        text.append(code)
        spans.append((start, start + len(code)))
        position = match.end()
    text.append(sentence[position:])
    words, tags = [], []
    for word in re.finditer(r"\S+", "".join(text)):
        overlapping = [s for s, e in spans if s < word.end() and word.start() < e]
        tags.append(0 if not overlapping else 1 if any(word.start() <= s for s in overlapping) else 2)
        words.append(word.group())
    return words, tags


def _reference_paragraphs():
    """Prose paragraphs of the reference documentation (dedented; code blocks, headings and grammar left out)."""
    for name in sorted(topics.topics):
        for paragraph in re.split(r"\n\s*\n", topics.topics[name]):
            lines = [
                line for line in textwrap.dedent(paragraph).split("\n") if line.strip() and not _HEADING.match(line)
            ]
            if lines and lines[0].startswith("* "):  # A list item and its indented continuation.
                lines = [lines[0][2:]] + [line.strip() for line in lines[1:]]
            if _reads_as_prose(lines):
                yield "\n".join(lines)


def _reads_as_prose(lines: list[str]) -> bool:
    """No indented (code) line, no grammar, six words or more, most of them words of letters."""
    words = " ".join(lines).split()
    if not lines or any(line.startswith((" ", "\t", ">>>", "...")) for line in lines) or "::=" in words:
        return False
    return len(words) >= 6 and sum(bool(re.match(r"^\W?[A-Za-z]+\W*$", w)) for w in words) >= 0.6 * len(words)


def _docstring_paragraphs():
    """Docstring paragraphs of the standard library with backticks, doctests and code blocks left out."""
    for tree in stdlib_module_trees():
        for node in _docstring_nodes(tree):
            for paragraph in (ast.get_docstring(node) or "").split("\n\n"):
                lines = paragraph.strip("\n").split("\n")
                if "`" in paragraph and not any(
                    line.lstrip().startswith((">>>", "...", "$ ")) or line.startswith((" ", "\t")) for line in lines
                ):
                    yield paragraph


def docstring_code_tags(*, test_fraction: float = 0.2, seed: int = 0) -> dict:
    """Sentences of Python's own documentation with their code words tagged.

    The sentences of the reference documentation's prose paragraphs and of
    the standard library's docstring paragraphs that mark code with
    backticks (about 3,100 on Python 3.11, 54% with a code span, 8% of the
    words code), each distinct sentence once, split into train and test at
    random with `seed` (deterministic for a given Python version; derived in
    about 10 s, then cached next to the default corpus).

    Args:
        test_fraction: float. Share of the sentences held out for testing.
        seed: int. Shuffle seed.

    Returns:
        dict with `train_words`, `train_tags`, `test_words`, `test_tags`
        (lists of lists: words are str, tags are ids) and `tag_names`
        (`["O", "B-CODE", "I-CODE"]`).

    Example:
    >>> data = docstring_code_tags()
    >>> data["train_words"][0], data["train_tags"][0]  # doctest: +SKIP
    (['Return', 'the', 'value', 'of', 'name.'], [0, 0, 0, 0, 1])
    """
    examples = _cached_examples()
    random.Random(seed).shuffle(examples)
    test_size = int(len(examples) * test_fraction)
    test, train = examples[:test_size], examples[test_size:]
    return {
        "train_words": [words for words, _ in train],
        "train_tags": [tags for _, tags in train],
        "test_words": [words for words, _ in test],
        "test_tags": [tags for _, tags in test],
        "tag_names": list(CODE_TAGS),
    }


def _cached_examples() -> list:
    """All examples, sorted; derived once per Python version and kept next to the default corpus."""
    return [tuple(example) for example in cached_json("docstring_code_tags", _VERSION, _derive_examples)]


def _derive_examples() -> list:
    examples = {}
    sources = ((_reference_paragraphs(), REFERENCE_CODE, '"'), (_docstring_paragraphs(), DOCSTRING_CODE, "`"))
    for paragraphs, code_span, mark in sources:
        for paragraph in paragraphs:
            for sentence in split_sentences(paragraph):
                words, tags = strip_code_markup(sentence, code_span)
                if len(words) >= MIN_WORDS and mark not in " ".join(words):
                    examples.setdefault(" ".join(words), (words, tags))
    return [examples[key] for key in sorted(examples)]
