import pytest

from tests.real_text import INSERTED_CHARACTERS
from tests.real_text import real_lines
from tests.real_text import real_pairs

pytestmark = pytest.mark.backend_free  # TensorFlow and tf-text only: no Keras backend reaches it.


def test_real_lines_are_many_and_varied():
    lines = real_lines()
    assert len(lines) >= 10_000
    text = "\n".join(lines)
    for phenomenon in ["ß", "…", "“", "”", "’", "İ", "\u200b", *INSERTED_CHARACTERS]:
        assert phenomenon in text, repr(phenomenon)
    for first, last in [("\u0400", "\u04ff"), ("\u4e00", "\u9fff"), ("\u0900", "\u097f"), ("\u0e00", "\u0e7f")]:
        assert any(first <= ch <= last for ch in text), (first, last)  # Cyrillic, CJK, Devanagari, Thai.
    words = [word for line in lines for word in line.split()]
    assert any(len(word) > 100 for word in words)
    assert any(len(word) > 100 and not word.isascii() for word in words)
    # Under the 100-character limit but over tf-text's default 100-byte limit.
    assert any(34 < len(word) <= 100 and len(word.encode()) > 100 for word in words)
    assert len(real_pairs()) >= 1000
