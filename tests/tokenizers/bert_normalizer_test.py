import pytest
import tensorflow as tf

from keras_bert3.tokenizers import BertNormalizer
from keras_bert3.tokenizers import unicode_table

pytestmark = pytest.mark.backend_free  # TensorFlow and tf-text only: no Keras backend reaches it.

CHUNK = 40_000


@pytest.mark.slow
@pytest.mark.parametrize("lowercase", [True, False])
@pytest.mark.parametrize("strip_accents", [True, False])
def test_every_code_point_matches_hugging_face(lowercase, strip_accents):
    """The shipped table, run as TF ops, equals the installed `tokenizers` on all code points."""
    from tokenizers import normalizers
    from tokenizers import pre_tokenizers

    hf_normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=strip_accents, lowercase=lowercase
    )
    hf_pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    code_points = [c for c in range(unicode_table.MAX_CODE_POINT + 1) if not 0xD800 <= c <= 0xDFFF]
    # Spaces between code points: every one is seen alone, as a word boundary
    # and as part of words ("a" + c + "b").
    texts = []
    for i in range(0, len(code_points), CHUNK):
        chunk = code_points[i : i + CHUNK]
        texts.append(" ".join(chr(c) for c in chunk))
        texts.append(" ".join(f"a{chr(c)}b" for c in chunk[::7]))
    ours = BertNormalizer(lowercase=lowercase, strip_accents=strip_accents).split_words(tf.constant(texts))
    for text, words in zip(texts, ours.to_list()):
        expected = [w for w, _ in hf_pre_tokenizer.pre_tokenize_str(hf_normalizer.normalize_str(text))]
        got = [w.decode("utf-8") for w in words]
        if got != expected:
            first = next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)
            pytest.fail(
                f"first difference at word {first}: ours {got[first : first + 3]!r}, HF {expected[first : first + 3]!r}"
            )


def test_table_is_small_and_loads():
    import os

    assert os.path.getsize(unicode_table.TABLE_PATH) < 1_000_000
    table = unicode_table.load_unicode_table(lowercase=True)
    assert table.output(ord("A")) == "a"
    assert table.output(0x200B) == ""
    assert table.output(0xA0) == " "
    assert table.output(ord("!")) == " ! "
    assert table.output(ord("東")) == " 東 "
    assert unicode_table.load_unicode_table(lowercase=True).output(ord("ß")) == "ß"
    assert unicode_table.load_unicode_table(lowercase=False).output(ord("é")) == "é"


def test_known_hugging_face_details():
    normalizer = BertNormalizer(lowercase=True)
    words = normalizer.split_words(tf.constant(["a\x0bb\x1cc\x85d\u200be\ufeff", "x\u2028y\xa0z", "Straße…ﬁ", "ΌΣΟΣ"]))
    assert words.to_list() == [
        [b"abcde"],
        [b"x", b"y", b"z"],
        ["straße".encode(), "…".encode(), "ﬁ".encode()],
        ["οσοσ".encode()],
    ]
