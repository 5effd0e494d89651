import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_bert3.tokenizers import BertSegmentJoiner
from tests.real_text import real_lines
from tests.real_text import real_pairs

pytestmark = pytest.mark.backend_free  # TensorFlow and tf-text only: no Keras backend reaches it.


@pytest.mark.parametrize("sequence_length", [3, 4, 5, 8, 17, 32, 64, 128])
@pytest.mark.slow
def test_pairs_match_hugging_face_longest_first(sequence_length, uncased_tokenizer, hf_uncased):
    pairs = real_pairs()
    first, second = [a for a, _ in pairs], [b for _, b in pairs]
    ours = uncased_tokenizer.join_segments(tf.constant(first), tf.constant(second), sequence_length=sequence_length)
    ref = hf_uncased(first, second, truncation="longest_first", max_length=sequence_length, padding="max_length")
    np.testing.assert_array_equal(ours["token_ids"].numpy(), np.array(ref["input_ids"]))
    np.testing.assert_array_equal(ours["segment_ids"].numpy(), np.array(ref["token_type_ids"]))
    np.testing.assert_array_equal(ours["padding_mask"].numpy(), np.array(ref["attention_mask"]))


@pytest.mark.parametrize("sequence_length", [2, 3, 16, 64])
def test_single_segments_match_hugging_face(sequence_length, uncased_tokenizer, hf_uncased):
    lines = list(real_lines()[::10]) + ["", " ", "\t\n", "\u200b"]
    ours = uncased_tokenizer.join_segments(tf.constant(lines), sequence_length=sequence_length)
    ref = hf_uncased(lines, truncation=True, max_length=sequence_length, padding="max_length")
    np.testing.assert_array_equal(ours["token_ids"].numpy(), np.array(ref["input_ids"]))
    np.testing.assert_array_equal(ours["segment_ids"].numpy(), np.array(ref["token_type_ids"]))
    np.testing.assert_array_equal(ours["padding_mask"].numpy(), np.array(ref["attention_mask"]))


def test_empty_strings_join_to_cls_sep(uncased_tokenizer):
    t = uncased_tokenizer
    out = t.join_segments(tf.constant(["", "   ", "\u200b\x00"]), tf.constant(["", "", ""]), sequence_length=5)
    np.testing.assert_array_equal(
        out["token_ids"].numpy(), [[t.cls_token_id, t.sep_token_id, t.sep_token_id, 0, 0]] * 3
    )
    out = t.join_segments("", sequence_length=4)
    np.testing.assert_array_equal(out["token_ids"].numpy(), [t.cls_token_id, t.sep_token_id, 0, 0])
    np.testing.assert_array_equal(out["padding_mask"].numpy(), [1, 1, 0, 0])


def test_unbatched_dense_and_config():
    joiner = BertSegmentJoiner(sequence_length=6, cls_token_id=2, sep_token_id=3, pad_token_id=0)
    out = joiner(tf.constant([7, 8, 9, 10]), tf.constant([11, 12, 13]))
    # Budget 3 for lengths 4 and 3: Hugging Face keeps 2 of the longer, 1 of the shorter.
    np.testing.assert_array_equal(out["token_ids"].numpy(), [2, 7, 8, 3, 11, 3])
    np.testing.assert_array_equal(out["segment_ids"].numpy(), [0, 0, 0, 0, 1, 1])
    restored = BertSegmentJoiner.from_config(joiner.get_config())
    assert restored.get_config() == joiner.get_config()
    with pytest.raises(ValueError, match="too short"):
        BertSegmentJoiner(sequence_length=2, cls_token_id=2, sep_token_id=3, pad_token_id=0)(
            tf.ragged.constant([[1]]), tf.ragged.constant([[1]])
        )


def test_configs_saved_under_the_old_name_still_load():
    """The layer was `BertPacker`: a config saved under that name loads as `BertSegmentJoiner`."""
    joiner = BertSegmentJoiner(sequence_length=6, cls_token_id=2, sep_token_id=3, pad_token_id=0)
    saved = dict(keras.saving.serialize_keras_object(joiner), class_name="BertPacker")
    saved["registered_name"] = "keras_bert3>BertPacker"
    restored = keras.saving.deserialize_keras_object(saved)
    assert isinstance(restored, BertSegmentJoiner) and restored.get_config() == joiner.get_config()


def test_the_old_name_imports_for_a_release_with_a_warning():
    import keras_bert3
    import keras_bert3.tokenizers

    for package in (keras_bert3, keras_bert3.tokenizers):
        with pytest.warns(
            DeprecationWarning,
            match=rf"{package.__name__}\.BertPacker is deprecated .* use {package.__name__}\.BertSegmentJoiner",
        ):
            assert package.BertPacker is BertSegmentJoiner
    with pytest.warns(DeprecationWarning):
        from keras_bert3 import BertPacker  # noqa: F401  (the import form scripts use)
    with pytest.raises(AttributeError, match="has no attribute 'BertPackerr'"):
        keras_bert3.tokenizers.BertPackerr


def test_tokenizer_pack_is_the_deprecated_name_of_join_segments(uncased_tokenizer):
    with pytest.warns(DeprecationWarning, match="join_segments"):
        old = uncased_tokenizer.pack(tf.constant(["A text."]), sequence_length=8)
    new = uncased_tokenizer.join_segments(tf.constant(["A text."]), sequence_length=8)
    for name in new:
        np.testing.assert_array_equal(old[name].numpy(), new[name].numpy(), err_msg=name)
