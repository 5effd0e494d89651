"""`BertTokenizer.tokenize_with_offsets` against Hugging Face's offset mapping
(`BertTokenizerFast(..., return_offsets_mapping=True)`: characters of the
original string) on every real test line: English, accents, CJK, Cyrillic,
punctuation, inserted control and invisible characters, over-long words."""

import pytest
import tensorflow as tf

from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
from tests.real_text import real_lines
from tests.reference import import_reference

pytestmark = pytest.mark.backend_free  # TensorFlow and tf-text only: no Keras backend reaches it.

# Lines that exercise the offsets' harder cases: expansions (ﬁ, İ), decomposed
# accents, special tokens in the text, [UNK] words, CJK, empty strings.
EDGE_LINES = ["a [MASK] b [SEP]c", "ﬁne Straße İstanbul cafe\u0301 ǅ", "x" * 150 + " ok", "東京タワー、ok?", "", " \t "]


@pytest.fixture(scope="module")
def hf_fast(minilm_dir):
    # transformers 5 ignores BertTokenizerFast(vocab_file=...): load the directory.
    return import_reference("transformers").BertTokenizerFast.from_pretrained(minilm_dir)


def count_mismatches(tokenizer, hf_tokenizer, lines) -> int:
    ids, starts, ends = (values.to_list() for values in tokenizer.tokenize_with_offsets(lines))
    expected = hf_tokenizer(lines, return_offsets_mapping=True, add_special_tokens=False)
    mismatches = 0
    for i in range(len(lines)):
        same_ids = ids[i] == expected["input_ids"][i]
        mismatches += not same_ids or list(zip(starts[i], ends[i])) != [tuple(o) for o in expected["offset_mapping"][i]]
    return mismatches


@pytest.mark.slow
def test_offsets_equal_hugging_face_on_all_real_lines(minilm_dir, hf_fast):
    tokenizer = BertTokenizer.from_preset(minilm_dir)
    lines = list(real_lines()) + EDGE_LINES
    assert len(lines) > 20_000
    assert count_mismatches(tokenizer, hf_fast, lines) == 0


def test_offsets_without_special_tokens_in_strings_and_ids_unchanged(minilm_dir, hf_fast):
    tokenizer = BertTokenizer.from_preset(minilm_dir, special_tokens_in_strings=False)
    lines = list(real_lines())[:2000] + EDGE_LINES[1:]
    assert count_mismatches(tokenizer, hf_fast, lines) == 0
    ids, _, _ = tokenizer.tokenize_with_offsets(lines)
    assert ids.to_list() == tokenizer.tokenize(lines).to_list()


@pytest.mark.slow
def test_scalar_word_offsets_and_tf_function(minilm_dir):
    tokenizer = BertTokenizer.from_preset(minilm_dir)
    text = "Unaffable [MASK]x, 東京"
    _, starts, ends, word_starts, word_ends = tokenizer.tokenize_with_offsets(text, word_offsets=True)
    pieces = [text[s:e] for s, e in zip(starts.numpy(), ends.numpy())]
    assert pieces == ["Una", "ffa", "ble", "[MASK]", "x", ",", "東", "京"]
    assert [text[s:e] for s, e in zip(word_starts.numpy(), word_ends.numpy())][:3] == ["Unaffable"] * 3
    graph = tf.function(lambda s: tokenizer.tokenize_with_offsets(s)[1])
    assert graph(tf.constant([text])).to_list() == [starts.numpy().tolist()]
    # Invalid UTF-8: one U+FFFD a bad sequence, no crash.
    _, bad_starts, _ = tokenizer.tokenize_with_offsets([b"\xff\xfeab cd"])
    assert bad_starts.to_list() == [[2, 5]]
