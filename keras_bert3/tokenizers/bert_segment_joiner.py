"""Joins segments of token ids into BERT inputs `[CLS] a [SEP] (b [SEP])`, truncating like Hugging Face."""

import keras
import tensorflow as tf

from keras_bert3.tokenizers.joined_segments import joined_segments
from keras_bert3.upstream.string_input_layer import StringInputLayer


def longest_first_lengths(first_lengths: tf.Tensor, second_lengths: tf.Tensor, budget: int):
    """Lengths `(batch,)` each segment keeps under Hugging Face's "longest_first" pair truncation.

    Follows Rust `tokenizers` `truncate_encodings`; `budget` is the tokens left
    for both segments (sequence length - 3)."""
    shorter = tf.minimum(first_lengths, second_lengths)
    longer_keep = tf.where(shorter > budget, shorter, tf.maximum(shorter, budget - shorter))
    both = shorter + longer_keep > budget
    shorter_keep = tf.where(both, tf.cast(budget // 2, shorter.dtype), shorter)
    longer_keep = tf.where(both, tf.cast(budget // 2 + budget % 2, shorter.dtype), longer_keep)
    first_is_longer = first_lengths > second_lengths
    first_keep = tf.where(first_is_longer, longer_keep, shorter_keep)
    second_keep = tf.where(first_is_longer, shorter_keep, longer_keep)
    return tf.minimum(first_keep, first_lengths), tf.minimum(second_keep, second_lengths)


@keras.saving.register_keras_serializable(package="keras_bert3")
class BertSegmentJoiner(StringInputLayer):
    """Joins one or two segments of token ids into fixed-length BERT inputs.

    Single segments become `[CLS] a [SEP]`, pairs `[CLS] a [SEP] b [SEP]`, padded to `sequence_length`. Too long inputs
    are cut as Hugging Face's `truncation="longest_first"` (`keras_hub.layers.MultiSegmentPacker` gives an odd leftover
    token to the first segment, Hugging Face to the longer one).

    Args:
        sequence_length: int. Length of the output (>= 3 for pairs, >= 2 for single segments).

    Call args:
        first, second (optional): int ids, ragged `(batch, None)` or dense `(tokens,)` for one example.

    Returns:
        dict of int32 `token_ids`, `segment_ids`, `padding_mask` `(batch, sequence_length)` (or unbatched).

    Examples:
    >>> joiner = BertSegmentJoiner(sequence_length=7, cls_token_id=2, sep_token_id=3, pad_token_id=0)
    >>> out = joiner(tf.ragged.constant([[10, 11, 12, 13]]), tf.ragged.constant([[20, 21]]))
    >>> out["token_ids"].numpy()
    array([[ 2, 10, 11,  3, 20, 21,  3]], dtype=int32)
    """

    def __init__(
        self,
        sequence_length: int,
        *,
        cls_token_id: int,
        sep_token_id: int,
        pad_token_id: int,
        **kwargs,
    ):
        kwargs.setdefault("dtype", "int32")
        super().__init__(**kwargs)
        self.sequence_length = int(sequence_length)
        self.cls_token_id = int(cls_token_id)
        self.sep_token_id = int(sep_token_id)
        self.pad_token_id = int(pad_token_id)
        self.built = True

    def call(self, first, second=None) -> dict[str, tf.Tensor]:
        first, unbatched = _to_ragged_batch(first)
        segments = [first]
        if second is not None:
            second, _ = _to_ragged_batch(second)
            segments.append(second)
        budget = self.sequence_length - 1 - len(segments)
        if budget < 0:
            raise ValueError(
                f"sequence_length={self.sequence_length} is too short for {len(segments)} "
                "segment(s) and their [CLS]/[SEP] tokens."
            )
        lengths = [s.row_lengths() for s in segments]
        if len(segments) == 1:
            keep = [tf.minimum(lengths[0], budget)]
        else:
            keep = list(longest_first_lengths(lengths[0], lengths[1], budget))
        token_ids, segment_ids, lengths = joined_segments(
            segments,
            keep,
            cls_token_id=self.cls_token_id,
            sep_token_id=self.sep_token_id,
            pad_token_id=self.pad_token_id,
            sequence_length=self.sequence_length,
        )
        padding_mask = tf.cast(tf.range(self.sequence_length)[None, :] < lengths[:, None], tf.int32)
        outputs = {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}
        if unbatched:
            outputs = {key: value[0] for key, value in outputs.items()}
        return outputs

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(
            {
                "sequence_length": self.sequence_length,
                "cls_token_id": self.cls_token_id,
                "sep_token_id": self.sep_token_id,
                "pad_token_id": self.pad_token_id,
            }
        )
        return config


# Configs saved under the layer's old name still load.
keras.saving.get_custom_objects()["keras_bert3>BertPacker"] = BertSegmentJoiner


def _to_ragged_batch(ids) -> tuple[tf.RaggedTensor, bool]:
    if isinstance(ids, tf.RaggedTensor):
        return tf.cast(ids, tf.int32), False
    ids = tf.cast(tf.convert_to_tensor(ids), tf.int32)
    if ids.shape.rank == 1:
        return tf.RaggedTensor.from_tensor(ids[None]), True
    if ids.shape.rank == 2:
        return tf.RaggedTensor.from_tensor(ids), False
    raise ValueError(f"Expected token ids of rank 1 or 2, got shape {ids.shape}.")
