"""What the tasks of one output row per text or text pair (`BertClassifier`, `BertRegressor`) share: their
`tf.data` pipeline of raw texts and their predictions for raw texts."""

import numpy as np

from keras_bert3.models.task_inputs import is_dataset


def text_rows_dataset(task, x, y=None, sample_weight=None, *, batch_size, shuffle, keep_order, num_classes=None):
    """Batches of model inputs (and labels) for texts, text pairs or a dataset of them, grouped by length unless
    `keep_order`; labels checked to lie in `[0, num_classes)` where it is given."""
    from keras_bert3.preprocessing.text_classification_dataset import text_classification_dataset

    if not is_dataset(x) and y is not None and not isinstance(y, (np.ndarray, list, tuple)):
        y = np.asarray(y)  # e.g. a pandas Series.
    options = dict(batch_size=batch_size, shuffle=shuffle, bucket=not keep_order, sample_weight=sample_weight)
    return text_classification_dataset(x, y, preprocessor=task.preprocessor, num_classes=num_classes, **options)


def predict_text_rows(task, x, run, width: int) -> np.ndarray:
    """The model's outputs `(n, width)` for texts or pairs (float32 `(0, width)` for none): tokenized
    `TOKENIZE_CHUNK` at a time, each chunk `run` on its own."""
    import tensorflow as tf

    from keras_bert3.preprocessing.text_classification_dataset import TOKENIZE_CHUNK
    from keras_bert3.preprocessing.text_classification_dataset import text_arrays

    arrays = text_arrays(x, task.preprocessor)
    chunks = [np.zeros((0, width), "float32")]
    for start in range(0, len(arrays[0]), TOKENIZE_CHUNK):
        texts = tuple(tf.constant(array[start : start + TOKENIZE_CHUNK], tf.string) for array in arrays)
        batch = task.preprocessor(texts if len(texts) == 2 else texts[0])
        chunks.append(run({name: value.numpy() for name, value in batch.items()}))
    return np.concatenate(chunks)
