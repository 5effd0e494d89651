"""The pages a user reads stay readable: README.md under 15,000 bytes (the user's manual; details go to
docs/), bench/README.md under 60,000 (what holds today; superseded sections go to bench/history/, a file a
month), and every relative link between the pages reaches its file and, where it names one, its heading."""

import pathlib
import re

import pytest

pytestmark = pytest.mark.backend_free  # Files only: one pass is enough.

REPO = pathlib.Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "bench" / "README.md"]
PAGES += sorted((REPO / "bench" / "history").glob("*.md"))
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def anchors(page: pathlib.Path) -> set[str]:
    """GitHub's anchors for the page's headings: lower case, punctuation dropped, spaces as hyphens, and
    `-1`, `-2`, ... after a repeated one."""
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6} (.+)$", FENCE.sub("", page.read_text(encoding="utf-8")), re.MULTILINE):
        anchor = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        yield anchor if count == 0 else f"{anchor}-{count}"


def test_the_readme_and_the_measurements_page_stay_short():
    assert len((REPO / "README.md").read_bytes()) < 15_000
    assert len((REPO / "bench" / "README.md").read_bytes()) < 60_000


def test_every_link_between_the_pages_resolves():
    links = 0
    for page in PAGES:
        for target in LINK.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
            if re.match(r"^[a-z]+:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            assert linked.exists(), f"{page.relative_to(REPO)} links to {target}: no such file"
            if anchor and linked.suffix == ".md":
                assert anchor in set(anchors(linked)), f"{page.relative_to(REPO)} links to {target}: no such heading"
            links += 1
    assert links > 50  # The pages link to each other (the README to docs/ and bench/, bench/ to its sections).
