"""Helpers shared by the tests (in the spirit of keras-hub's `TestCase`): tiny
models built one way everywhere, and the round trips a Keras object must
survive.

    backbone = tiny_backbone(tokenizer.vocabulary_size())
    restored = assert_keras_file_round_trip(model, tmp_path, lambda m: m.predict(texts, verbose=0))
"""

import copy
import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_bert3.models.bert_backbone import BertBackbone


def tiny_backbone(vocabulary_size: int, *, seed: int = 0, **overrides) -> BertBackbone:
    """A randomly initialised two-layer BERT with hidden size 8 (seeded, so
    two calls build the same weights)."""
    keras.utils.set_random_seed(seed)
    config = dict(num_layers=2, num_heads=2, hidden_dim=8, intermediate_dim=16, max_sequence_length=64)
    return BertBackbone(vocabulary_size=vocabulary_size, **{**config, **overrides})


def assert_same_outputs(actual, expected, atol: float = 0.0) -> None:
    """Equal nested outputs (dicts, lists, arrays; strings equal), numbers within `atol`."""
    actual, expected = keras.tree.flatten(actual), keras.tree.flatten(expected)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        if isinstance(e, (str, bytes)):
            assert a == e
        else:
            np.testing.assert_allclose(keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(e), atol=atol, rtol=0)


def as_json(config) -> str:
    """A config as its JSON text (a file turns tuples into lists)."""
    return json.dumps(config, sort_keys=True, default=repr)


def assert_serialization_round_trip(obj):
    """`serialize_keras_object` then `deserialize_keras_object`: the same
    class with the same config, found by its registered name. Returns the copy."""
    serialized = keras.saving.serialize_keras_object(obj)
    restored = keras.saving.deserialize_keras_object(copy.deepcopy(serialized))  # Optimizers edit it in place.
    assert type(restored) is type(obj)
    assert keras.saving.serialize_keras_object(restored) == serialized
    return restored


def assert_keras_file_round_trip(model: keras.Model, tmp_path, outputs, atol: float = 0.0) -> keras.Model:
    """`model.save("model.keras")` then `keras.saving.load_model`: the same
    class, the same config, the same compile settings and the same
    `outputs(model)` (e.g. `lambda m: m.predict(x, verbose=0)`). Returns the
    loaded model."""
    path = str(tmp_path / f"{model.name}.keras")
    model.save(path)
    restored = keras.saving.load_model(path)
    assert type(restored) is type(model)
    assert as_json(restored.get_config()) == as_json(model.get_config())
    if model.compiled:  # Compiled again as saved (the optimizer's name is made anew).
        saved, loaded = model.get_compile_config(), restored.get_compile_config()
        saved["optimizer"]["config"].pop("name"), loaded["optimizer"]["config"].pop("name")
        assert as_json(loaded) == as_json(saved)
    assert_same_outputs(outputs(restored), outputs(model), atol=atol)
    return restored


def bad_task_inputs() -> dict:
    """Inputs no task takes, each of a kind a Keras user might pass by mistake."""
    ids = np.ones((2, 4), "int32")
    return {
        "a number": 42,
        "None": None,
        "a set": {"a", "b"},
        "a generator": (text for text in ["a"]),
        "one string": "one text",
        "a float array": np.zeros((2, 3)),
        "an int tensor": tf.constant([[1, 2]]),
        "model inputs, 1-D": {"token_ids": ids[0], "segment_ids": ids[0], "padding_mask": ids[0]},
        "model inputs, a key missing": {"token_ids": ids, "segment_ids": ids},
        "model inputs, shapes differ": {"token_ids": ids, "segment_ids": ids[:, :3], "padding_mask": ids},
        "model inputs, floats": {"token_ids": ids, "segment_ids": ids, "padding_mask": ids.astype("float32")},
        "a dataset of ints": tf.data.Dataset.from_tensor_slices([1, 2]),
    }


def assert_bad_inputs_refused(task, labels) -> None:
    """`fit`, `evaluate` and `predict` of `task` refuse each of `bad_task_inputs()`
    with one TypeError or ValueError that names the task and the method (the
    shared check of `keras_bert3.models.task_inputs`), before any step runs."""
    name = type(task).__name__
    for kind, x in bad_task_inputs().items():
        for method in ("fit", "evaluate", "predict"):
            args = (x,) if method == "predict" or labels is None else (x, labels)
            with pytest.raises((TypeError, ValueError), match=rf"^{name}\.{method}") as error:
                getattr(task, method)(*args, verbose=0)
            assert "token_ids" in str(error.value), (kind, method, str(error.value))  # Says what it takes.
    assert int(task.optimizer.iterations) == 0
