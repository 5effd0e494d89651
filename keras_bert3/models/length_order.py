"""Predictions on tokenized examples in length order, each batch cut to its longest example so that
little compute goes to padding; the outputs come back in input order (`BertTask.predict`)."""

import keras
import numpy as np

from keras_bert3.preprocessing.bert_text_preprocessor import INPUT_NAMES
from keras_bert3.preprocessing.fixed_shapes import FixedShapeBatches


def predict_in_length_order(model, model_inputs: dict, *, batch_size: int, shapes: FixedShapeBatches, per_token: bool):
    """`model`'s outputs for numpy model inputs `(n, [choices,] length)`, in input order; None for no examples.
    Each batch is shaped by `shapes`; per-token outputs come back padded to `length` with zeros."""
    mask = np.asarray(model_inputs["padding_mask"])
    lengths = mask.reshape(len(mask), -1, mask.shape[-1]).sum(axis=-1).max(axis=-1)  # The longest choice's.
    width = mask.shape[-1]
    multiple = model.preprocessor.pad_to_multiple_of
    order = np.argsort(lengths, kind="stable")
    batches = []
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        length = min(-(-max(int(lengths[rows].max()), 1) // multiple) * multiple, width)
        batch = {name: np.asarray(model_inputs[name])[rows, ..., :length] for name in INPUT_NAMES}
        outputs = model.predict_on_batch(shapes.arrays(batch, batch_size=batch_size))
        outputs = shapes.cut(outputs, rows=len(rows), length=length if per_token else None)
        if per_token:
            outputs = keras.tree.map_structure(lambda o: _pad_tokens(np.asarray(o), width), outputs)
        batches.append(outputs)
    if not batches:
        return None
    return keras.tree.map_structure(lambda *parts: _unsort(np.concatenate(parts), order), *batches)


def _pad_tokens(output, width: int):
    """A per-token output `(batch, length, ...)` padded with zeros to `(batch, width, ...)`."""
    padding = [(0, 0), (0, width - output.shape[1])] + [(0, 0)] * (output.ndim - 2)
    return np.pad(output, padding)


def _unsort(sorted_values, order):
    """The rows of `sorted_values` (row i is example `order[i]`) in example order."""
    values = np.empty_like(sorted_values)
    values[order] = sorted_values
    return values
