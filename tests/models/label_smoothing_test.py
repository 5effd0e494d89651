"""Label smoothing of the tasks' losses against PyTorch's `cross_entropy(label_smoothing=...)` (Hugging Face's
`--label_smoothing_factor` smooths alike), ignored labels included; a regressor's loss is refused."""

import keras
import numpy as np
import pytest

from keras_bert3.models.label_smoothing import SmoothedSparseCategoricalCrossentropy
from keras_bert3.models.label_smoothing import smoothed
from tests.reference import import_reference


def test_smoothed_cross_entropy_is_pytorchs():
    torch = import_reference("torch")
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(3, 5, 7)).astype("float32")
    labels = rng.integers(0, 7, size=(3, 5))
    labels[0, 2] = labels[2, 4] = -100  # Ignored tokens, as a token classifier's.
    for amount in (0.1, 0.3):
        expected = torch.nn.functional.cross_entropy(
            torch.tensor(logits).reshape(-1, 7), torch.tensor(labels).reshape(-1), label_smoothing=amount
        )
        loss = smoothed(keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-100), amount)
        assert isinstance(loss, SmoothedSparseCategoricalCrossentropy)
        np.testing.assert_allclose(float(loss(labels, logits)), float(expected), rtol=1e-5)
        config = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(loss)).get_config()
        assert (config["label_smoothing"], config["ignore_class"]) == (amount, -100)


def test_every_output_and_binary_losses_are_smoothed_and_a_regressor_refused():
    losses = smoothed({"start": keras.losses.SparseCategoricalCrossentropy(from_logits=True)}, 0.1)
    assert isinstance(losses["start"], SmoothedSparseCategoricalCrossentropy)
    binary = smoothed(keras.losses.BinaryCrossentropy(from_logits=True), 0.2)
    assert binary.get_config()["label_smoothing"] == 0.2 and binary.get_config()["from_logits"]
    unchanged = keras.losses.MeanSquaredError()
    assert smoothed(unchanged, 0.0) is unchanged
    with pytest.raises(ValueError, match="MeanSquaredError has no classes to smooth"):
        smoothed(unchanged, 0.1)
