"""The BERT recipe's optimizer: schedule, weight-decay exclusions, LAMB,
gradient accumulation."""

import keras
import numpy as np
import pytest

from keras_bert3.optimizers.bert_optimizer import bert_optimizer
from keras_bert3.optimizers.linear_warmup_decay import LinearWarmupLinearDecay


def test_schedule_is_linear_warmup_then_linear_decay():
    schedule = LinearWarmupLinearDecay(2e-4, warmup_steps=10, total_steps=110)
    steps = np.arange(0, 130)
    expected = np.where(steps < 10, 2e-4 * steps / 10, 2e-4 * np.clip(1 - (steps - 10) / 100, 0, 1))
    actual = np.array([float(schedule(int(s))) for s in steps])
    np.testing.assert_allclose(actual, expected, atol=1e-10)
    with pytest.raises(ValueError, match="must exceed warmup_steps"):
        LinearWarmupLinearDecay(1e-4, warmup_steps=10, total_steps=10)


def zero_gradient_step(optimizer):
    """One step with zero gradients: only the decoupled weight decay acts."""
    dense = keras.layers.Dense(3, bias_initializer="ones")
    norm = keras.layers.LayerNormalization()
    dense.build((None, 4))
    norm.build((None, 3))
    variables = dense.weights + norm.weights
    before = [np.array(v.numpy()) for v in variables]
    optimizer.apply([np.zeros(v.shape, "float32") for v in variables], variables)
    return {v.path.split("/")[-1]: (b, np.array(v.numpy())) for v, b in zip(variables, before)}


@pytest.mark.parametrize("kind", ["adamw", "lamb"])
def test_weight_decay_spares_layer_norm_and_biases(kind):
    optimizer = bert_optimizer(learning_rate=0.1, total_steps=10, warmup_steps=0, kind=kind)
    changes = zero_gradient_step(optimizer)
    before, after = changes["kernel"]
    np.testing.assert_allclose(after, before * (1 - 0.1 * 0.01), rtol=1e-6)
    for name in ("bias", "gamma", "beta"):
        np.testing.assert_array_equal(changes[name][1], changes[name][0])


def test_gradient_accumulation_updates_every_n_batches():
    optimizer = bert_optimizer(learning_rate=0.1, total_steps=10, warmup_steps=0, gradient_accumulation_steps=2)
    variable = keras.Variable(np.ones((2, 2), "float32"), name="kernel")
    values = []
    for _ in range(4):
        optimizer.apply([keras.ops.ones((2, 2))], [variable])
        values.append(np.array(variable.numpy()))
    np.testing.assert_array_equal(values[0], np.ones((2, 2)))  # Accumulated, not applied.
    assert not np.array_equal(values[1], values[0])  # Applied on the second batch.
    np.testing.assert_array_equal(values[2], values[1])
    assert not np.array_equal(values[3], values[2])
