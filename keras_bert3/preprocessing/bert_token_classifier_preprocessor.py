"""BertTokenClassifierPreprocessor: words to BERT inputs, each word's label on its first WordPiece."""

import keras
import tensorflow as tf

from keras_bert3.preprocessing.task_preprocessor import TaskPreprocessor
from keras_bert3.preprocessing.task_preprocessor import trim_to_longest
from keras_bert3.preprocessing.token_classification_dataset import word_batch
from keras_bert3.preprocessing.word_piece_alignment import align_words
from keras_bert3.preprocessing.word_piece_alignment import split_on_whitespace
from keras_bert3.preprocessing.word_piece_alignment import token_labels
from keras_bert3.tokenizers.bert_segment_joiner import BertSegmentJoiner
from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer


@keras.saving.register_keras_serializable(package="keras_bert3")
class BertTokenClassifierPreprocessor(TaskPreprocessor):
    """Lays a batch of words out as `[CLS] pieces [SEP]` and aligns word labels.

    Each word is tokenized on its own and its label goes to its first piece; other tokens get -100, as Hugging Face's
    `word_ids()` recipe. A word whose first piece is cut at `sequence_length` loses its label. The output is padded as
    `BertTextPreprocessor` pads. TensorFlow ops only.

    Args:
        sequence_length: int. The longest tokenized example.

    Call args:
        words: a string RaggedTensor `(batch, None)`, or `(batch,)` strings split at ASCII whitespace.
        word_labels: optional int RaggedTensor `(batch, None)` like the words.

    Returns:
        dict of int32 `token_ids`, `segment_ids`, `padding_mask` (and with
        `word_labels`, `labels`) `(batch, length)`; `word_positions`
        `(batch, max_words)`, each word's first piece or -1.

    Examples:
    ```python
    preprocessor = keras_bert3.BertTokenClassifierPreprocessor(tokenizer, sequence_length=64)
    words = tf.ragged.constant([["Call", "os.walk", "first."]])
    out = preprocessor(words, tf.ragged.constant([[0, 1, 0]]))
    out["word_positions"]  # [[1, 2, 5]]: "call", then "os" "." "walk", then "first" "."
    out["labels"]          # [[-100, 0, 1, -100, -100, 0, -100, -100, ...]]
    ```
    """

    def __init__(self, tokenizer: BertTokenizer, *, sequence_length: int = 128, pad_to_multiple_of: int = 16, **kwargs):
        super().__init__(**kwargs)
        if sequence_length < 3:
            raise ValueError(f"sequence_length={sequence_length} is too short for [CLS], a word and [SEP].")
        if pad_to_multiple_of < 1:
            raise ValueError(f"pad_to_multiple_of={pad_to_multiple_of} must be at least 1.")
        self.tokenizer = tokenizer
        self.sequence_length = int(sequence_length)
        self.pad_to_multiple_of = int(pad_to_multiple_of)
        self.segment_joiner = BertSegmentJoiner(
            sequence_length=self.sequence_length,
            cls_token_id=tokenizer.cls_token_id,
            sep_token_id=tokenizer.sep_token_id,
            pad_token_id=tokenizer.pad_token_id,
        )
        self.built = True

    @staticmethod
    def as_words(words) -> tf.RaggedTensor:
        """Words as a string RaggedTensor `(batch, None)`; `(batch,)` strings are split at whitespace."""
        if isinstance(words, tf.RaggedTensor):
            return words
        if isinstance(words, tf.Tensor):
            return split_on_whitespace(words)
        return word_batch(words)

    def call(self, words, word_labels=None) -> dict[str, tf.Tensor]:
        words = self.as_words(words)
        token_ids, word_positions = align_words(self.tokenizer, words, self.sequence_length)
        model_inputs = self.segment_joiner(token_ids)
        outputs = trim_to_longest(model_inputs, self.pad_to_multiple_of)
        outputs["word_positions"] = word_positions.to_tensor(default_value=-1)
        if word_labels is not None:
            outputs["labels"] = token_labels(word_positions, word_labels, tf.shape(outputs["token_ids"])[1])
        return outputs

    def token_lengths(self, words) -> tf.Tensor:
        """int32 `(batch,)`: each example's tokenized length, [CLS] and [SEP] included."""
        token_ids, _ = align_words(self.tokenizer, self.as_words(words), self.sequence_length)
        return tf.minimum(tf.cast(token_ids.row_lengths(), tf.int32) + 2, self.sequence_length)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(
            {
                "sequence_length": self.sequence_length,
                "pad_to_multiple_of": self.pad_to_multiple_of,
            }
        )
        return config
