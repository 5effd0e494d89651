import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_bert3.tokenizers import BertTokenizer
from keras_bert3.tokenizers import learn_wordpiece_vocabulary
from tests.real_text import real_lines
from tests.tokenizers.conftest import hf_bert_tokenizer


def assert_same_ids(tokenizer, hf_tokenizer, lines):
    ours = tokenizer(tf.constant(lines)).to_list()
    ref = hf_tokenizer(list(lines), add_special_tokens=False)["input_ids"]
    mismatches = [(line, r, o) for line, r, o in zip(lines, ref, ours) if r != o]
    assert not mismatches, f"{len(mismatches)}/{len(lines)} lines differ, first: {mismatches[0]!r}"


@pytest.mark.backend_free
def test_uncased_matches_hugging_face_on_all_real_lines(uncased_tokenizer, hf_uncased):
    assert_same_ids(uncased_tokenizer, hf_uncased, list(real_lines()))


@pytest.fixture(scope="module")
def cased_vocab_path(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("cased") / "vocab.txt")
    vocab = learn_wordpiece_vocabulary(real_lines()[::4], 2500, lowercase=False, vocabulary_output_file=path)
    assert 1000 < len(vocab) <= 2500 and vocab[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    return path


@pytest.mark.backend_free
def test_cased_learnt_vocabulary_matches_hugging_face_on_all_real_lines(cased_vocab_path):
    tokenizer = BertTokenizer(cased_vocab_path, lowercase=False)
    hf = hf_bert_tokenizer(cased_vocab_path, lowercase=False)
    lines = list(real_lines())
    assert_same_ids(tokenizer, hf, lines)
    # Not degenerate: most tokens are known pieces, and case is kept.
    ids = tokenizer(tf.constant(lines)).flat_values.numpy()
    assert np.mean(ids == tokenizer.unk_token_id) < 0.1
    assert tokenizer("The").numpy().tolist() != tokenizer("the").numpy().tolist()


def test_scalar_batch_and_python_inputs(uncased_tokenizer):
    t = uncased_tokenizer
    batch = t(tf.constant(["Hello world!", "Привет, мир"]))
    assert isinstance(batch, tf.RaggedTensor) and batch.dtype == tf.int32
    scalar = t("Hello world!")
    assert isinstance(scalar, tf.Tensor) and scalar.shape.rank == 1
    assert scalar.numpy().tolist() == batch[0].numpy().tolist()
    assert t(["Hello world!"]).to_list() == batch[:1].to_list()


@pytest.mark.slow
def test_in_tf_data_and_tf_function(uncased_tokenizer):
    t = uncased_tokenizer
    lines = list(real_lines()[::50])
    expected = t(tf.constant(lines)).to_list()
    ds = tf.data.Dataset.from_tensor_slices(lines).batch(64).map(t, num_parallel_calls=2)
    assert [row for batch in ds for row in batch.to_list()] == expected
    unbatched = tf.data.Dataset.from_tensor_slices(lines).map(t)
    assert [x.numpy().tolist() for x in unbatched] == expected
    batches = (
        tf.data.Dataset.from_tensor_slices((lines, lines[1:] + lines[:1]))
        .batch(32)
        .map(lambda a, b: t.join_segments(a, b, sequence_length=24))
    )
    direct = t.join_segments(tf.constant(lines), tf.constant(lines[1:] + lines[:1]), sequence_length=24)
    got = np.concatenate([batch["token_ids"].numpy() for batch in batches])
    np.testing.assert_array_equal(got, direct["token_ids"].numpy())
    traced = tf.function(t.tokenize, input_signature=[tf.TensorSpec([None], tf.string)])
    assert traced(tf.constant(lines)).to_list() == expected
    # Each graph above called the one graph of the tokenizer traced for the first (`traced_once`).
    from keras_bert3 import traced_once

    assert traced_once._FUNCTIONS[t][("_batch_tokenize", ())].experimental_get_tracing_count() == 1


@pytest.mark.slow
def test_saved_model_round_trip(uncased_tokenizer, tmp_path):
    class Preprocessor(tf.Module):
        def __init__(self, tokenizer):
            super().__init__()
            self.tokenizer = tokenizer

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def tokenize(self, strings):
            return self.tokenizer(strings)

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string), tf.TensorSpec([None], tf.string)])
        def join_segments(self, first, second):
            return self.tokenizer.join_segments(first, second, sequence_length=32)

    lines = list(real_lines()[1::97])
    path = str(tmp_path / "saved")
    tf.saved_model.save(Preprocessor(uncased_tokenizer), path)
    loaded = tf.saved_model.load(path)
    assert loaded.tokenize(tf.constant(lines)).to_list() == uncased_tokenizer(tf.constant(lines)).to_list()
    got = loaded.join_segments(tf.constant(lines), tf.constant(lines[::-1]))
    want = uncased_tokenizer.join_segments(tf.constant(lines), tf.constant(lines[::-1]), sequence_length=32)
    for key in want:
        np.testing.assert_array_equal(got[key].numpy(), want[key].numpy())


@pytest.mark.backend_free
def test_config_round_trip(minilm_vocab_path):
    tokenizer = BertTokenizer(minilm_vocab_path, lowercase=True, max_word_chars=50, name="bert_tok")
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(tokenizer))
    assert isinstance(restored, BertTokenizer)
    assert restored.get_config() == tokenizer.get_config()
    line = "Tokenizers " + "x" * 60 + " café"
    assert restored(line).numpy().tolist() == tokenizer(line).numpy().tolist()


@pytest.mark.backend_free
def test_vocabulary_accessors(uncased_tokenizer, minilm_vocab_path):
    t = uncased_tokenizer
    with open(minilm_vocab_path, encoding="utf-8") as f:
        vocab = [line.rstrip("\r\n") for line in f]
    assert t.vocabulary_size() == len(vocab) and t.get_vocabulary() == vocab
    assert [t.id_to_token(i) for i in t.special_token_ids] == ["[CLS]", "[SEP]", "[PAD]", "[MASK]", "[UNK]"]
    assert t.token_to_id("[MASK]") == t.mask_token_id == vocab.index("[MASK]")
    assert t.token_to_id("##ing") == vocab.index("##ing")
    with pytest.raises(ValueError):
        t.token_to_id("not-a-token")
    with pytest.raises(ValueError):
        t.id_to_token(len(vocab))


@pytest.mark.backend_free
def test_detokenize_matches_hugging_face_decode(uncased_tokenizer, hf_uncased):
    lines = [line for line in real_lines()[:3000] if line.isascii()][:500]
    ids = uncased_tokenizer(tf.constant(lines))
    ours = [s.decode("utf-8") for s in uncased_tokenizer.detokenize(ids).numpy()]
    ref = hf_uncased.batch_decode(ids.to_list(), clean_up_tokenization_spaces=True)
    same = sum(a == b for a, b in zip(ours, ref))
    assert same == len(lines), [(a, b) for a, b in zip(ours, ref) if a != b][:3]
    assert uncased_tokenizer.detokenize(uncased_tokenizer("Hello, world!")).numpy() == b"hello, world!"


@pytest.mark.backend_free
def test_missing_special_tokens_raise_clear_error():
    with pytest.raises(ValueError, match=r"mask_token='\[MASK\]'.*learn_wordpiece_vocabulary"):
        BertTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a"])
    with pytest.raises(ValueError, match=r"cls_token.*sep_token"):
        BertTokenizer(["[PAD]", "[UNK]", "[MASK]", "a"])
    tokenizer = BertTokenizer(
        ["<pad>", "<unk>", "<s>", "</s>", "<mask>", "a"],
        cls_token="<s>",
        sep_token="</s>",
        pad_token="<pad>",
        mask_token="<mask>",
        unk_token="<unk>",
    )
    assert tokenizer("a b").numpy().tolist() == [5, 1]


@pytest.mark.backend_free
def test_empty_whitespace_invalid_utf8_and_huge_inputs(uncased_tokenizer, hf_uncased):
    t = uncased_tokenizer
    assert t(tf.constant(["", " ", "\t\n\r", "\u200b\ufeff"])).to_list() == [[], [], [], []]
    assert t("").numpy().tolist() == []
    broken = [b"caf\xc3 au lait", b"\xff\xfe\xfdabc", b"ab\xed\xa0\x80cd \xe6\x9d", b"\x80"]
    ours = t(tf.constant(broken)).to_list()
    ref = hf_uncased([b.decode("utf-8", errors="replace") for b in broken], add_special_tokens=False)["input_ids"]
    assert ours == ref
    huge, lines = "", iter(real_lines())
    while len(huge) < 100_000:
        huge += next(lines) + " "
    huge += "x" * 100_000  # One 100,000-character word, too.
    assert t(huge).numpy().tolist() == hf_uncased(huge, add_special_tokens=False)["input_ids"]


@pytest.mark.backend_free
def test_max_word_chars_counts_characters_not_bytes(uncased_tokenizer):
    t = uncased_tokenizer
    for word, known in [("я" * 100, True), ("я" * 101, False), ("a" * 100, True), ("a" * 101, False)]:
        ids = t(word).numpy().tolist()
        assert (ids != [t.unk_token_id]) == known, (len(word), ids[:3])


@pytest.mark.backend_free
def test_special_tokens_in_text_match_hugging_face(uncased_tokenizer, hf_uncased, minilm_vocab_path):
    lines = ["a[MASK]b [mask] [CLS]x", "[[SEP]]", "[UNK][PAD]", " [MASK] ", "Fill the [MASK], please.", "[MASK"]
    lines += [line.replace(" ", " [SEP] ", 2) for line in real_lines()[::400]]
    assert_same_ids(uncased_tokenizer, hf_uncased, lines)
    as_text = BertTokenizer(minilm_vocab_path, special_tokens_in_strings=False)
    assert uncased_tokenizer.mask_token_id not in as_text("a [MASK]").numpy().tolist()
