"""Pretraining batches checked against the model's vocabulary as they are read."""

import sys


def with_token_ids_checked(dataset, vocabulary_size: int):
    """`dataset` of `(x, y, sample_weight)` batches with each batch's token ids and MLM labels
    checked, as `tf.data` reads it, to be below `vocabulary_size` (the rows of the model's token embedding).

    An id past the embedding fails deep in the step on a CPU, gives zeros on a GPU and NaN on JAX; here the first
    such batch ends `fit` with an `InvalidArgumentError` naming the id and the size. Anything but a
    `tf.data.Dataset` (a distributed dataset, arrays) is returned as it is."""
    tf = sys.modules.get("tensorflow")
    if tf is None or not isinstance(dataset, tf.data.Dataset):
        return dataset

    @tf.autograph.experimental.do_not_convert  # Traced as written: no Python control flow.
    def check(x, y, *weights):
        largest = tf.maximum(tf.reduce_max(x["token_ids"]), tf.reduce_max(y["mlm"]))
        message = tf.strings.format(
            # No quotes: TensorFlow escapes them in the error's text.
            "A batch holds token id {} but the token embedding of the model has " + f"{vocabulary_size:,}" + " rows: "
            "the data was tokenized with a larger vocabulary than the model. Build the backbone with "
            "vocabulary_size=tokenizer.vocabulary_size() for the tokenizer that made the data, or make the data "
            "with the tokenizer of the model.",
            [largest],
        )
        with tf.control_dependencies([tf.debugging.Assert(largest < vocabulary_size, [message])]):
            x = {name: tf.identity(value) for name, value in x.items()}
        return (x, y, *weights)

    return dataset.map(check)
