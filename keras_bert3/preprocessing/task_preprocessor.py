"""The base of the task preprocessors: a layer that takes strings and holds a
`BertTokenizer`, which its config carries (serialized with the tokenizer's
own config, so presets restore the same vocabulary and settings)."""

import tensorflow as tf

from keras_bert3.layers.nested_objects import deserialized
from keras_bert3.layers.nested_objects import serialized
from keras_bert3.upstream.string_input_layer import StringInputLayer


def trim_to_longest(model_inputs: dict, multiple: int, *, keep=()) -> dict:
    """`model_inputs` (int `(batch, length)` tensors) cut to the batch's longest
    example (its `padding_mask`), rounded up to a multiple of `multiple` so
    that a compiled step sees few shapes. Entries named in `keep` stay whole.
    """
    longest = tf.reduce_max(tf.concat([tf.reduce_sum(model_inputs["padding_mask"], axis=-1), [1]], 0))
    length = tf.minimum((longest + multiple - 1) // multiple * multiple, tf.shape(model_inputs["padding_mask"])[-1])
    return {name: value if name in keep else value[..., :length] for name, value in model_inputs.items()}


class TaskPreprocessor(StringInputLayer):
    """Subclasses set `self.tokenizer` in `__init__` (which takes `tokenizer`
    first) and add their other arguments to `get_config()`.
    """

    def get_config(self) -> dict:
        return {**super().get_config(), **serialized(self, ("tokenizer",))}

    @classmethod
    def from_config(cls, config):
        return cls(**deserialized(config, ("tokenizer",)))
