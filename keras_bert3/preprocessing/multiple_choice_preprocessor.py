"""MultipleChoicePreprocessor: contexts and their choices to BERT inputs, each choice a pair with its context."""

import keras
import tensorflow as tf

from keras_bert3.preprocessing.bert_text_preprocessor import BertTextPreprocessor


@keras.saving.register_keras_serializable(package="keras_bert3")
class MultipleChoicePreprocessor(BertTextPreprocessor):
    """Tokenizes contexts `(batch,)` and their choices `(batch, choices)` (strings) into model inputs `(batch,
    choices, length)`: each choice joined to its context as `[CLS] context [SEP] choice [SEP]` (Hugging Face's
    "longest_first" truncation), as BERT's SWAG setup and `BertForMultipleChoice` take them. The length is the
    batch's longest pair rounded up to `pad_to_multiple_of`, at most `sequence_length`. TensorFlow ops only.

    Args:
        sequence_length: int. The longest tokenized pair; longer ones are truncated.
        pad_to_multiple_of: int. 1: exactly the longest pair.
    """

    def __init__(self, tokenizer, *, sequence_length: int = 128, pad_to_multiple_of: int = 16, **kwargs):
        kwargs.pop("sentence_pairs", None)  # Always pairs (a saved config names it).
        options = {"sequence_length": sequence_length, "pad_to_multiple_of": pad_to_multiple_of}
        super().__init__(tokenizer, sentence_pairs=True, **options, **kwargs)

    def call(self, inputs) -> dict[str, tf.Tensor]:
        contexts, choices = inputs
        contexts, choices = tf.convert_to_tensor(contexts, tf.string), tf.convert_to_tensor(choices, tf.string)
        shape = tf.shape(choices)  # (batch, choices)
        first = tf.reshape(tf.repeat(contexts, shape[1]), [-1])  # Each context once a choice.
        pairs = super().call((first, tf.reshape(choices, [-1])))
        return {name: tf.reshape(value, tf.concat([shape, [-1]], 0)) for name, value in pairs.items()}
