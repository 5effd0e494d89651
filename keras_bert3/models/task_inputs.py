"""What every task's `fit`, `evaluate` and `predict` accept (model inputs, a `tf.data.Dataset` of them,
or `TaskSpec.raw_inputs`), checked in one place for one clear error; and how many batches an epoch holds."""

import math

import numpy as np
import tensorflow as tf

from keras_bert3.preprocessing.bert_text_preprocessor import INPUT_NAMES
from keras_bert3.preprocessing.bert_text_preprocessor import is_model_inputs

MODEL_INPUTS = "model inputs (a dict of int (batch, length) arrays token_ids, segment_ids, padding_mask)"
RAW_CONTAINERS = (list, tuple, np.ndarray, tf.Tensor, tf.RaggedTensor)


def check_task_input(task, x, method: str) -> None:
    """Raises a TypeError or ValueError naming the task, the method, what it got and what it takes,
    when `x` is none of the input kinds the task takes."""
    where = f"{type(task).__name__}.{method}"
    takes = f"{where} takes {task.spec.raw_inputs}, {MODEL_INPUTS} or a tf.data.Dataset of them"
    if isinstance(x, tf.data.Dataset):
        _check_dataset(task, x, where)
    elif isinstance(x, dict):
        if any(name in x for name in INPUT_NAMES) or task.spec.raw_dict_keys is None:
            check_model_inputs(x, where, rank=input_rank(task))
    elif isinstance(x, (str, bytes)):
        raise TypeError(f"{takes}; got one {type(x).__name__}: wrap a single text in a list.")
    elif not isinstance(x, RAW_CONTAINERS) and not hasattr(x, "__array__"):  # e.g. a pandas Series passes.
        raise TypeError(f"{takes}; got {type(x).__name__}.")
    elif _numeric_dtype(x) is not None:
        raise TypeError(
            f"{takes}; got a {_numeric_dtype(x)} {type(x).__name__} of shape {tuple(x.shape)}. "
            "Token ids go in a dict (token_ids, segment_ids, padding_mask)."
        )


def input_rank(task) -> int:
    """How many axes a task's model inputs have: 2, `(batch, length)`; 3 where each example is several choices
    (`TaskSpec.inputs_per_choice`), `(batch, choices, length)`."""
    return 3 if task.spec.inputs_per_choice else 2


def check_model_inputs(x: dict, where: str, *, rank: int = 2) -> None:
    """`x` holds the three inputs as integer arrays of one shape, of `rank` axes (`input_rank`)."""
    missing = [name for name in INPUT_NAMES if name not in x]
    if missing:
        raise ValueError(f"{where}: {MODEL_INPUTS} are missing {', '.join(missing)}; got keys {sorted(x)}.")
    shapes = {name: tuple(np.shape(x[name])) for name in INPUT_NAMES}
    if any(len(shape) != rank for shape in shapes.values()) or len(set(shapes.values())) != 1:
        axes = "(batch, length)" if rank == 2 else "(batch, choices, length)"
        raise ValueError(f"{where}: {MODEL_INPUTS} must be of one {axes} shape; got shapes {shapes}.")
    dtypes = {name: tf.as_dtype(getattr(x[name], "dtype", np.asarray(x[name]).dtype)) for name in INPUT_NAMES}
    if not all(dtype.is_integer for dtype in dtypes.values()):
        raise TypeError(f"{where}: {MODEL_INPUTS} must be integers; got { ({n: d.name for n, d in dtypes.items()}) }.")


def _check_dataset(task, dataset, where: str) -> None:
    spec = dataset.element_spec
    first = spec[0] if isinstance(spec, tuple) else spec
    if isinstance(first, dict) and any(name in first for name in INPUT_NAMES):
        missing = [name for name in INPUT_NAMES if name not in first]
        ranks = {name: first[name].shape.rank for name in INPUT_NAMES if name in first}
        if missing or any(rank not in (input_rank(task), None) for rank in ranks.values()):
            raise ValueError(
                f"{where}: a tf.data.Dataset of model inputs yields batches of {MODEL_INPUTS}; this one yields {spec}."
            )
    elif task.spec.takes_text_datasets:
        if not any(part.dtype == tf.string for part in tf.nest.flatten(first) if hasattr(part, "dtype")):
            raise TypeError(
                f"{where} takes a tf.data.Dataset of texts ((texts, labels) for fit) or of batches of model inputs "
                f"({MODEL_INPUTS}); this one yields {spec}."
            )
    else:
        raise TypeError(
            f"{where} takes a tf.data.Dataset of batches of model inputs ({MODEL_INPUTS}, with labels for fit); "
            f"this one yields {spec}. Pass raw inputs as {task.spec.raw_inputs} instead."
        )


def _numeric_dtype(x) -> str | None:
    """The element type of an array or tensor of numbers; None for strings, objects and lists."""
    if isinstance(x, (tf.Tensor, tf.RaggedTensor)):
        return None if x.dtype == tf.string else x.dtype.name
    if isinstance(x, np.ndarray):
        return x.dtype.name if x.dtype.kind in "biufc" else None
    return None


def is_dataset(x) -> bool:
    return isinstance(x, tf.data.Dataset)


def yields_model_inputs(dataset) -> bool:
    """True when a dataset's elements (or their `x`) are BERT model inputs."""
    spec = dataset.element_spec
    first = spec[0] if isinstance(spec, tuple) else spec
    return is_model_inputs(first)


def with_known_length(dataset):
    """`dataset` with its number of batches declared, when tf.data cannot infer it: counted once by a
    pass over the pipeline (the same number every epoch), so Keras knows where an epoch ends instead of
    warning that the input "ran out of data"."""
    if int(dataset.cardinality()) != tf.data.UNKNOWN_CARDINALITY:
        return dataset
    return dataset.apply(tf.data.experimental.assert_cardinality(count_steps(dataset)))


def count_steps(data, batch_size=None) -> int | None:
    """Batches per epoch: a dataset's cardinality (counted when unknown), or from array length."""
    if isinstance(data, tf.data.Dataset):
        cardinality = int(data.cardinality())
        if cardinality >= 0:
            return cardinality
        if cardinality == tf.data.INFINITE_CARDINALITY:
            return None
        return int(data.reduce(0, lambda count, _: count + 1))  # Bucketed text batches: cheap to count.
    if is_model_inputs(data):
        return math.ceil(len(data["token_ids"]) / (batch_size or 32))
    return None
