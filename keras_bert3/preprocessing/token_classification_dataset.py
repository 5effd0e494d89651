"""Batches of words and word labels for token classification, bucketed by length, tokenized once."""

import numpy as np
import tensorflow as tf

from keras_bert3.preprocessing.ragged_rows import as_rows
from keras_bert3.preprocessing.ragged_rows import concat_rows
from keras_bert3.preprocessing.ragged_rows import inputs_and_targets
from keras_bert3.preprocessing.ragged_rows import padded_batches
from keras_bert3.preprocessing.text_inputs import python_texts
from keras_bert3.data.without_autotune import without_autotune
from keras_bert3.preprocessing.word_piece_alignment import split_on_whitespace

TOKENIZE_CHUNK = 4096  # Sentences tokenized per call.


def word_batch(x) -> tf.RaggedTensor:
    """Sentences (word lists, or strings split at ASCII whitespace) as a string RaggedTensor `(n, None)`."""
    x = python_texts(x)
    if isinstance(x, (str, bytes)):
        raise TypeError("Expected a list of sentences (word lists or strings); wrap a single one in a list.")
    x = list(x)
    if all(isinstance(s, (str, bytes)) for s in x):
        return split_on_whitespace(tf.constant(x, tf.string, shape=(len(x),)))
    for i, sentence in enumerate(x):
        if isinstance(sentence, (str, bytes)) or not all(isinstance(w, (str, bytes)) for w in sentence):
            raise TypeError(
                f"Sentence {i} is {type(sentence).__name__} {str(sentence)[:60]!r}: pass either a list of "
                "word lists (each a list of str) or a list of strings (split at whitespace), not a mix."
            )
    lengths = [len(sentence) for sentence in x]
    flat = [word for sentence in x for word in sentence]
    return tf.RaggedTensor.from_row_lengths(
        tf.constant(flat, tf.string, shape=(len(flat),)), tf.constant(lengths, tf.int64)
    )


def check_word_labels(words: tf.RaggedTensor, labels, num_labels: int | None) -> tf.RaggedTensor:
    """Word labels as an int32 RaggedTensor like `words`, checked: one a word, in `[0, num_labels)`."""
    labels = [np.asarray(sentence).reshape(-1) for sentence in labels]
    counts = words.row_lengths().numpy()
    if len(labels) != len(counts):
        raise ValueError(f"{len(counts)} sentences but {len(labels)} label lists.")
    for i, (sentence, count) in enumerate(zip(labels, counts)):
        if len(sentence) != count:
            raise ValueError(
                f"Sentence {i} has {count} words but {len(sentence)} labels: give one label per "
                "word (strings are split at whitespace)."
            )
        if sentence.size and sentence.dtype.kind not in "iu":
            raise ValueError(f"Labels must be integer tag ids; sentence {i} has dtype {sentence.dtype}.")
        if num_labels and sentence.size and (sentence.min() < 0 or sentence.max() >= num_labels):
            bad = sentence[(sentence < 0) | (sentence >= num_labels)][0]
            raise ValueError(
                f"Label {bad} in sentence {i} is outside 0..{num_labels - 1} (num_labels={num_labels}): map "
                f"labels to 0..num_labels-1, or build the model with num_labels covering them."
            )
    flat = np.concatenate(labels).astype("int32") if labels else np.zeros((0,), "int32")
    return tf.RaggedTensor.from_row_lengths(flat, tf.constant(counts, tf.int64))


def token_classification_dataset(
    x,
    y=None,
    *,
    preprocessor,
    batch_size: int = 32,
    shuffle: bool = False,
    bucket: bool = True,
    num_labels: int | None = None,
    sample_weight=None,
    seed: int | None = None,
) -> tf.data.Dataset:
    """Batches `(inputs, labels[, sample_weight])` of sentences for `BertTokenClassifier`.

    Word labels go to each word's first WordPiece, -100 elsewhere. With
    `bucket`, sentences of similar token length share a batch, padded to its longest.

    Args:
        x: a list of word lists, or a list of strings (split at whitespace).
        y: optional word labels, one list of ints per sentence (one per word).
        preprocessor: a `BertTokenClassifierPreprocessor`.
        num_labels: int or None. Check that labels lie in `[0, num_labels)`.
        sample_weight: optional floats `(n,)`, one per sentence.

    Returns:
        `model_inputs` or `(model_inputs, labels[, sample_weight])`: int32
        `(batch, length)` inputs and labels, float32 `(batch,)` weights.

    Example:
    ```python
    tagger.fit(token_classification_dataset(words, tags, preprocessor=tagger.preprocessor, shuffle=True))
    ```
    """
    words = word_batch(x)
    n = int(words.nrows())
    labels = None if y is None else check_word_labels(words, y, num_labels)
    rows = ("token_ids", "segment_ids") + (() if labels is None else ("labels",))
    chunks = []
    for start in range(0, max(n, 1), TOKENIZE_CHUNK):
        chunk_labels = None if labels is None else labels[start : start + TOKENIZE_CHUNK]
        chunks.append(as_rows(preprocessor(words[start : start + TOKENIZE_CHUNK], chunk_labels), rows))
    columns = concat_rows(chunks)
    if sample_weight is not None:
        columns["sample_weight"] = np.asarray(sample_weight, "float32").reshape(-1)
        if len(columns["sample_weight"]) != n:
            raise ValueError(f"{n} sentences but {len(columns['sample_weight'])} sample weights.")
    dataset = tf.data.Dataset.from_tensor_slices(columns)
    if shuffle:
        dataset = dataset.shuffle(max(n, 1), seed=seed, reshuffle_each_iteration=True)
    batches = padded_batches(
        dataset,
        rows,
        batch_size=batch_size,
        multiple=preprocessor.pad_to_multiple_of,
        sequence_length=preprocessor.sequence_length,
        bucket=bucket,
        shuffle=shuffle,
        seed=seed,
    )
    return without_autotune(batches.map(lambda columns: inputs_and_targets(columns, "labels")).prefetch(2))
