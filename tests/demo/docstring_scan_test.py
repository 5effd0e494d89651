"""The docstring scanner finds what Python's own parser finds (`ast.get_docstring` on the module, its
classes and functions) on real files: the standard library's, and files written to trip it."""

import ast
import os
import sysconfig

import pytest

from keras_bert3_demo.default_corpus import _docstring_nodes
from keras_bert3_demo.docstring_scan import scanned_docstrings

pytestmark = pytest.mark.backend_free  # Files and Python only: no Keras backend reaches them.


def parsed_docstrings(source: str) -> list[str]:
    """The oracle: each docstring `ast` finds, in the order the file gives them."""
    nodes = sorted(_docstring_nodes(ast.parse(source)), key=lambda node: getattr(node, "lineno", 0))
    return [docstring for docstring in map(ast.get_docstring, nodes) if docstring]


def stdlib_sources(count: int) -> list[str]:
    root = sysconfig.get_paths()["stdlib"]
    names = sorted(name for name in os.listdir(root) if name.endswith(".py"))[:count]
    sources = []
    for name in names:
        with open(os.path.join(root, name), encoding="utf-8") as f:
            sources.append(f.read())
    return sources


def test_the_standard_librarys_docstrings_are_the_parsers_on_nearly_every_file():
    sources = stdlib_sources(150)
    agreeing = sum(scanned_docstrings(source) == parsed_docstrings(source) for source in sources)
    found = sum(len(parsed_docstrings(source)) for source in sources)
    assert found > 2_000, found  # Real files with many docstrings.
    assert agreeing >= 0.98 * len(sources), (agreeing, len(sources))


def test_strings_comments_and_escapes_that_are_not_docstrings_are_left_out():
    source = "\n".join(
        [
            "#!/usr/bin/env python",
            '# A comment with """ three quotes.',
            'r"""The module\'s docstring, raw: \\d stays."""',
            "",
            'NOT_A_DOCSTRING = """An assigned string."""',
            "TABLE = {",
            '    "key":',
            '        "a value after a colon, under no definition",',
            "}",
            "",
            "",
            "class Thing(Base,",
            "            metaclass=Meta):  # A header over two lines; a comment after its colon.",
            "    '''The class's docstring.'''",
            "",
            "    def method(self, text=\"'''\", other='\"\"\"'):",
            '        "One line, in double quotes, with an escape:\\nthere."',
            '        return f"""{text}"""',
            "",
            "    async def later(self):",
            '        b"""Bytes: not a docstring."""',
            "",
            "    def undocumented(self):",
            "        value = 1",
            '        """A string after a statement: not a docstring."""',
        ]
    )
    assert scanned_docstrings(source) == parsed_docstrings(source)
    assert scanned_docstrings(source) == [
        "The module's docstring, raw: \\d stays.",
        "The class's docstring.",
        "One line, in double quotes, with an escape:\nthere.",
    ]
