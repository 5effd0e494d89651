"""Text to model inputs for the tasks: preprocessor layers (tokenize, pack,
align words, window passages) and the `tf.data` pipelines of labelled batches."""
