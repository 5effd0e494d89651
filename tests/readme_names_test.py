"""Every `keras_bert3.<name>` the README's and docs' Python blocks call
resolves after `import keras_bert3` alone, in a process that has imported no
keras_bert3 module (forked from one that has imported TensorFlow and Keras:
tests/warm_commands.py). The README's pretraining snippet called
`keras_bert3.data.pretraining_dataset`, which `import keras_bert3` did not load."""

import pathlib
import re
import sys

import pytest

from tests import warm_commands

REPO = pathlib.Path(__file__).resolve().parent.parent
PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
DOTTED_NAME = re.compile(r"\bkeras_bert3(?:\.[A-Za-z_]\w*)+")

pytestmark = pytest.mark.backend_free  # The package's names are the same under either backend; one pass is enough.


def dotted_names() -> set[str]:
    names = set()
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for block in PYTHON_BLOCK.findall(path.read_text(encoding="utf-8")):
            names.update(name for name in DOTTED_NAME.findall(block) if not name.endswith("_demo"))
    return names


@pytest.mark.slow
def test_every_name_the_readme_calls_resolves_after_importing_the_package():
    names = sorted(dotted_names())
    assert "keras_bert3.data.pretraining_dataset" in names and len(names) > 10, names
    script = (
        "import sys, keras_bert3\n"
        "missing = []\n"
        "for name in sys.argv[1:]:\n"
        "    value = keras_bert3\n"
        "    for part in name.split('.')[1:]:\n"
        "        value = getattr(value, part, None)\n"
        "    if value is None:\n"
        "        missing.append(name)\n"
        "print('missing:', missing)\n"
    )
    done = warm_commands.run([sys.executable, "-c", script, *names], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "missing: []", done.stdout[-3000:]
