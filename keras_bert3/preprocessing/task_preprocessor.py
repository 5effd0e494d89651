"""The base of the task preprocessors: a string-input layer whose config carries its `BertTokenizer`."""

import tensorflow as tf

from keras_bert3.layers.nested_objects import deserialized
from keras_bert3.layers.nested_objects import serialized
from keras_bert3.upstream.string_input_layer import StringInputLayer


def trim_to_longest(model_inputs: dict, multiple: int, *, keep=()) -> dict:
    """`model_inputs` `(batch, [choices,] length)` cut to the longest example, rounded up to
    a multiple of `multiple` (few compiled shapes); entries in `keep` stay whole."""
    lengths = tf.reshape(tf.reduce_sum(model_inputs["padding_mask"], axis=-1), [-1])
    longest = tf.reduce_max(tf.concat([lengths, [1]], 0))
    length = tf.minimum((longest + multiple - 1) // multiple * multiple, tf.shape(model_inputs["padding_mask"])[-1])
    return {name: value if name in keep else value[..., :length] for name, value in model_inputs.items()}


class TaskPreprocessor(StringInputLayer):
    """Subclasses set `self.tokenizer` in `__init__` (taking `tokenizer` first) and extend `get_config()`."""

    def get_config(self) -> dict:
        return {**super().get_config(), **serialized(self, ("tokenizer",))}

    @classmethod
    def from_config(cls, config):
        return cls(**deserialized(config, ("tokenizer",)))
