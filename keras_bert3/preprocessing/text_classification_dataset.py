"""Batches of raw texts (and labels) for BERT tasks, bucketed by length, tokenized once."""

import numpy as np
import tensorflow as tf

from keras_bert3.preprocessing.ragged_rows import as_rows
from keras_bert3.preprocessing.ragged_rows import concat_rows
from keras_bert3.preprocessing.ragged_rows import inputs_and_targets
from keras_bert3.preprocessing.ragged_rows import padded_batches
from keras_bert3.preprocessing.text_inputs import python_texts
from keras_bert3.data.without_autotune import without_autotune

TOKENIZE_CHUNK = 4096  # Texts tokenized per call.
ROWS = ("token_ids", "segment_ids")  # `padding_mask` follows from the length.


def _as_string_array(texts) -> np.ndarray:
    texts = python_texts(texts)
    if isinstance(texts, (str, bytes)):
        raise TypeError("Expected a list of texts; wrap a single text in a list.")
    array = np.asarray(list(texts), dtype=object)
    if array.ndim != 1:
        raise ValueError(f"Expected a flat list of texts, got an array of shape {array.shape}.")
    bad = [i for i, t in enumerate(array[:1000]) if not isinstance(t, (str, bytes))]
    if bad:
        raise TypeError(f"Texts must be str or bytes; item {bad[0]} is {type(array[bad[0]]).__name__}.")
    return array


def text_arrays(x, preprocessor) -> tuple:
    """Texts as object arrays: `(first,)` or `(first, second)` checked against the preprocessor."""
    first, second = preprocessor.split_inputs(tuple(x) if isinstance(x, (tuple)) else x)
    arrays = (_as_string_array(first),) + (() if second is None else (_as_string_array(second),))
    if len(arrays) == 2 and len(arrays[0]) != len(arrays[1]):
        raise ValueError(f"The pair's two lists differ in length: {len(arrays[0])} and {len(arrays[1])}.")
    return arrays


def tokenized_texts(arrays: tuple, preprocessor) -> dict:
    """`text_arrays` tokenized once into `as_rows` columns, `TOKENIZE_CHUNK` texts a call."""
    chunks = []
    for start in range(0, max(len(arrays[0]), 1), TOKENIZE_CHUNK):
        texts = tuple(tf.constant(a[start : start + TOKENIZE_CHUNK], tf.string) for a in arrays)
        chunks.append(as_rows(preprocessor(texts if len(texts) == 2 else texts[0]), ROWS))
    return concat_rows(chunks)


def check_labels(labels, num_classes: int) -> np.ndarray:
    """Integer class ids in `[0, num_classes)`, as an int32 array."""
    labels = np.asarray(labels)
    if labels.ndim != 1:
        labels = labels.reshape(-1) if labels.ndim == 2 and labels.shape[-1] == 1 else labels
    if labels.dtype.kind not in "iu":
        raise ValueError(f"Labels must be integer class ids 0..{num_classes - 1}, got dtype {labels.dtype}.")
    if labels.size and (labels.min() < 0 or labels.max() >= num_classes):
        bad = labels[(labels < 0) | (labels >= num_classes)][0]
        raise ValueError(
            f"Label {bad} is outside 0..{num_classes - 1} (num_classes={num_classes}): map labels to "
            f"0..num_classes-1, or build the model with num_classes covering them."
        )
    return labels.astype("int32")


def text_classification_dataset(
    x,
    y=None,
    *,
    preprocessor,
    batch_size: int = 32,
    shuffle: bool = False,
    bucket: bool = True,
    num_classes: int | None = None,
    sample_weight=None,
    seed: int | None = None,
) -> tf.data.Dataset:
    """Batches `(inputs, labels[, sample_weight])` of texts for BERT tasks.

    With `bucket`, texts of similar token length share a batch, padded to its longest example as `preprocessor` pads.

    Args:
        x: a list of texts, a tuple `(first_texts, second_texts)`, or a `tf.data.Dataset`
            of unbatched texts / `(text, label)` (bucketed too) or of batches (only preprocessed).
        y: optional integer labels `(n,)`, for lists of texts.
        preprocessor: a `BertTextPreprocessor`.
        bucket: bool. Group by length; False keeps the order (for predict).
        num_classes: int or None. Check that labels lie in `[0, num_classes)`.

    Returns:
        `model_inputs` or `(model_inputs, labels[, sample_weight])`, int32 `(batch, length)` inputs.

    Example:
    ```python
    classifier.fit(text_classification_dataset(texts, labels, preprocessor=classifier.preprocessor, shuffle=True))
    ```
    """
    if isinstance(x, tf.data.Dataset):
        return _from_dataset(x, preprocessor, batch_size, shuffle, bucket, num_classes, seed)
    arrays = text_arrays(x, preprocessor)
    n = len(arrays[0])
    columns = tokenized_texts(arrays, preprocessor)
    if y is not None:
        columns["label"] = check_labels(y, num_classes) if num_classes else np.asarray(y)
        if len(columns["label"]) != n:
            raise ValueError(f"{n} texts but {len(columns['label'])} labels.")
    if sample_weight is not None:
        columns["sample_weight"] = np.asarray(sample_weight, "float32").reshape(-1)
    dataset = tf.data.Dataset.from_tensor_slices(columns)
    if shuffle:
        dataset = dataset.shuffle(max(n, 1), seed=seed, reshuffle_each_iteration=True)
    return _batches(dataset, preprocessor, batch_size, shuffle, bucket, seed)


def _is_texts(spec) -> bool:
    """A string tensor spec, or a pair of them."""
    if isinstance(spec, tuple):
        return len(spec) == 2 and all(_is_texts(part) and not isinstance(part, tuple) for part in spec)
    return isinstance(spec, tf.TensorSpec) and spec.dtype == tf.string


def _from_dataset(dataset, preprocessor, batch_size, shuffle, bucket, num_classes, seed):
    spec = dataset.element_spec
    if _is_texts(spec):
        has_targets, first_spec = False, spec
    elif isinstance(spec, tuple) and len(spec) in (2, 3) and _is_texts(spec[0]):
        has_targets, first_spec = True, spec[0]
    else:
        raise ValueError(
            "A dataset for a text task yields texts, (texts, labels) or (texts, labels, "
            "sample_weights), texts being strings or a pair (first, second) of strings; "
            f"this one yields {spec}."
        )
    first_spec = first_spec[0] if isinstance(first_spec, tuple) else first_spec

    @tf.autograph.experimental.do_not_convert
    def to_columns(*element):
        if has_targets:
            texts, rest = element[0], element[1:]
        else:
            texts, rest = (element if len(element) == 2 else element[0]), ()
        first, second = preprocessor.split_inputs(texts)
        columns = {"text": first}
        if second is not None:
            columns["second"] = second
        if rest:
            label = rest[0]
            if num_classes:
                label = tf.cast(label, tf.int32)
                tf.debugging.assert_non_negative(label, message="Labels must be in [0, num_classes).")
                tf.debugging.assert_less(label, num_classes, message=f"Labels must be < num_classes={num_classes}.")
            columns["label"] = label
        if len(rest) == 2:
            columns["sample_weight"] = tf.cast(rest[1], tf.float32)
        return columns

    dataset = dataset.map(to_columns)
    if getattr(first_spec, "shape", None) is not None and first_spec.shape.rank == 1:  # Already batched.
        return without_autotune(
            dataset.map(lambda c: _pack(c, preprocessor), num_parallel_calls=tf.data.AUTOTUNE).prefetch(2)
        )

    @tf.autograph.experimental.do_not_convert
    def to_rows(columns):
        texts = (columns.pop("text"), columns.pop("second")) if "second" in columns else columns.pop("text")
        return dict(columns, **as_rows(preprocessor(texts), ROWS))

    dataset = dataset.batch(TOKENIZE_CHUNK).map(to_rows).unbatch()
    if shuffle:
        dataset = dataset.shuffle(10_000, seed=seed, reshuffle_each_iteration=True)
    return _batches(dataset, preprocessor, batch_size, shuffle, bucket, seed)


def _batches(dataset, preprocessor, batch_size, shuffle, bucket, seed):
    """Examples of `as_rows` columns -> padded batches for `fit`."""
    batches = padded_batches(
        dataset,
        ROWS,
        batch_size=batch_size,
        multiple=preprocessor.pad_to_multiple_of,
        sequence_length=preprocessor.sequence_length,
        bucket=bucket,
        shuffle=shuffle,
        seed=seed,
    )
    return without_autotune(batches.map(lambda columns: inputs_and_targets(columns, "label")).prefetch(2))


def _pack(columns, preprocessor):
    texts = (columns["text"], columns["second"]) if "second" in columns else columns["text"]
    model_inputs = preprocessor(texts)
    if "label" not in columns:
        return model_inputs
    if "sample_weight" in columns:
        return model_inputs, columns["label"], columns["sample_weight"]
    return model_inputs, columns["label"]
