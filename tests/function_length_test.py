"""Every function in keras_bert3 fits on a screen: at most 60 lines, not
counting its docstring. A longer one says why in its docstring, in a
sentence that starts "Longer than a screen" (as `BertBackbone.__init__`,
keras-hub's three-part constructor); otherwise it is split into named steps."""

import ast
import pathlib

import pytest

pytestmark = pytest.mark.backend_free  # Files and Python only: no Keras backend reaches them.

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "keras_bert3"
MAX_LINES = 60
REASON = "Longer than a screen"


def long_functions(package: pathlib.Path = PACKAGE) -> list[str]:
    """`path:line name (n lines)` for each function of `package` over `MAX_LINES` whose docstring gives no reason."""
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            docstring = ast.get_docstring(node) or ""
            first = node.body[0]
            docstring_lines = first.end_lineno - first.lineno + 1 if docstring else 0
            lines = node.end_lineno - node.lineno + 1 - docstring_lines
            if lines > MAX_LINES and REASON not in docstring:
                found.append(f"{path.relative_to(package.parent)}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_is_longer_than_a_screen_without_a_reason():
    assert long_functions() == []


def test_the_rule_finds_a_long_function(tmp_path):
    """The check itself: a function of 61 lines is found; one with a reason,
    and one of 60 lines under a long docstring, are not."""
    statements = [f"    x{i} = {i}\n" for i in range(MAX_LINES)]
    docstring = '    """A docstring\n\n    of several lines.\n    """\n'
    (tmp_path / "long.py").write_text("def long():\n" + "".join(statements))
    (tmp_path / "explained.py").write_text(f'def explained():\n    """{REASON}: a table."""\n' + "".join(statements))
    (tmp_path / "short.py").write_text("def short():\n" + docstring + "".join(statements[1:]))
    assert [entry.split(" ")[1] for entry in long_functions(tmp_path)] == ["long"]
