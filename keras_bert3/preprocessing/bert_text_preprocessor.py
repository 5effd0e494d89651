"""BertTextPreprocessor: strings (or pairs) to BERT inputs, padded to the batch's longest example."""

import keras
import tensorflow as tf

from keras_bert3.preprocessing.task_preprocessor import TaskPreprocessor
from keras_bert3.preprocessing.task_preprocessor import trim_to_longest
from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer

INPUT_NAMES = ("token_ids", "segment_ids", "padding_mask")


def is_model_inputs(x) -> bool:
    """True when `x` is already a dict of BERT inputs (token ids, not text)."""
    return isinstance(x, dict) and "token_ids" in x


@keras.saving.register_keras_serializable(package="keras_bert3")
class BertTextPreprocessor(TaskPreprocessor):
    """Tokenizes a batch of texts into model inputs, padded to its longest example.

    Strings become `[CLS] a [SEP]`, pairs `[CLS] a [SEP] b [SEP]` (Hugging Face's "longest_first" truncation). The
    length is the batch's longest example rounded up to `pad_to_multiple_of` (few compiled shapes), at most
    `sequence_length`. TensorFlow ops only: it runs in `tf.data` and SavedModels.

    Args:
        sequence_length: int. The longest tokenized example; longer texts are truncated.
        pad_to_multiple_of: int. 1: exactly the longest example.
        sentence_pairs: bool. The inputs are tuples `(first, second)` of strings or `(batch,)` strings.

    Returns:
        dict of int32 `(batch, length)` `token_ids`, `segment_ids`, `padding_mask` (`(length,)` for one string).

    Examples:
    ```python
    preprocessor = keras_bert3.BertTextPreprocessor(tokenizer, sequence_length=128)
    preprocessor(["A short text.", "A somewhat longer text than the first."])["token_ids"].shape
    # (2, 16): 11 tokens, rounded up to a multiple of 16.
    ```
    """

    def __init__(
        self,
        tokenizer: BertTokenizer,
        *,
        sequence_length: int = 128,
        pad_to_multiple_of: int = 16,
        sentence_pairs: bool = False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if sequence_length < 2 + int(sentence_pairs):
            raise ValueError(f"sequence_length={sequence_length} is too short for [CLS] and [SEP].")
        if pad_to_multiple_of < 1:
            raise ValueError(f"pad_to_multiple_of={pad_to_multiple_of} must be at least 1.")
        self.tokenizer = tokenizer
        self.sequence_length = int(sequence_length)
        self.pad_to_multiple_of = int(pad_to_multiple_of)
        self.sentence_pairs = bool(sentence_pairs)
        self.built = True

    def split_inputs(self, inputs):
        """`(first, second)` for pairs or `(strings, None)`; checks the kind of input."""
        is_pair = isinstance(inputs, tuple) and len(inputs) == 2
        if self.sentence_pairs and not is_pair:
            raise ValueError(
                "This model takes sentence pairs: pass a tuple (first_texts, second_texts), "
                f"got {type(inputs).__name__}."
            )
        if not self.sentence_pairs and is_pair:
            raise ValueError(
                "This model takes single texts, but got a tuple of two (sentence pairs). "
                "Build it with sentence_pairs=True for pair tasks, or pass one list of texts."
            )
        return inputs if is_pair else (inputs, None)

    def call(self, inputs) -> dict[str, tf.Tensor]:
        first, second = self.split_inputs(inputs)
        model_inputs = self.tokenizer.join_segments(first, second, sequence_length=self.sequence_length)
        return trim_to_longest({name: model_inputs[name] for name in INPUT_NAMES}, self.pad_to_multiple_of)

    def token_lengths(self, inputs) -> tf.Tensor:
        """int32 `(batch,)`: the tokenized length of each example, [CLS] and [SEP] included."""
        first, second = self.split_inputs(inputs)
        length = tf.cast(self.tokenizer.tokenize(first).row_lengths(), tf.int32) + 2
        if second is not None:
            length += tf.cast(self.tokenizer.tokenize(second).row_lengths(), tf.int32) + 1
        return tf.minimum(length, self.sequence_length)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(
            {
                "sequence_length": self.sequence_length,
                "pad_to_multiple_of": self.pad_to_multiple_of,
                "sentence_pairs": self.sentence_pairs,
            }
        )
        return config
