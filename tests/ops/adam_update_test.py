"""`adam_update` (on TensorFlow the fused `ResourceApplyAdam`) moves the
variables and moments as `adam_update_reference` does, step after step; with
epsilon 0 both are Keras' own AdamW, whose epsilon differs only in where it
is added. Against `torch.optim.AdamW`: tests/optimizers/bert_adamw_test.py."""

import keras
import numpy as np
import pytest

from keras_bert3.ops.adam_update import adam_update_reference
from keras_bert3.optimizers.bert_adamw import BertAdamW
from keras_bert3.upstream.adam_moments import adam_moments

SETTINGS = dict(learning_rate=1e-3, weight_decay=0.01)
STEPS = 6

pytestmark = pytest.mark.cpu_numerics  # Kernels against references: tests/cpu_kind_test.py.


class ReferenceAdamW(BertAdamW):
    """`BertAdamW` stepping through `adam_update_reference`."""

    def update_step(self, gradient, variable, learning_rate):
        adam_update_reference(self, gradient, variable, learning_rate, *adam_moments(self, variable))


def train(optimizer):
    """`STEPS` steps of `optimizer` on a kernel and a bias: after each step,
    the variables and their moments `(m, v)`, as numpy."""
    rng = np.random.default_rng(0)
    variables = [
        keras.Variable(rng.normal(size=(64, 32)).astype("float32"), name="kernel"),
        keras.Variable(rng.normal(size=(32,)).astype("float32"), name="bias"),
    ]
    states = []
    for _ in range(STEPS):
        # Gradients of very different sizes: epsilon matters where they are small.
        gradients = [
            (rng.normal(size=v.shape) * 10.0 ** rng.uniform(-4, -1, v.shape)).astype("float32") for v in variables
        ]
        optimizer.apply(gradients, variables)
        states.append([[keras.ops.convert_to_numpy(t) for t in (v, *adam_moments(optimizer, v))] for v in variables])
    return states


def assert_same_states(ours, theirs):
    """The variables and first moments to 1e-6; the second moments to 2e-5:
    TensorFlow's kernel computes `1 - beta_2` in float32 (0.999 rounded first:
    1.3e-5 below 0.001), Keras and the reference in Python's float64."""
    for step, (our_state, their_state) in enumerate(zip(ours, theirs)):
        for our_variable, their_variable in zip(our_state, their_state):
            for mine, reference, rtol in zip(our_variable, their_variable, (1e-6, 1e-6, 2e-5)):
                atol = rtol * np.abs(reference).max()
                np.testing.assert_allclose(mine, reference, rtol=rtol, atol=atol, err_msg=f"step {step}")


def test_steps_are_the_reference_ones():
    ours = train(BertAdamW(epsilon=1e-6, **SETTINGS))
    theirs = train(ReferenceAdamW(epsilon=1e-6, **SETTINGS))
    assert_same_states(ours, theirs)
    first, last = ours[0][0][0], ours[-1][0][0]
    assert np.abs(last - first).max() > 1e-3  # The variables did move.


def test_without_epsilon_both_are_keras_adamw():
    keras_adamw = train(keras.optimizers.AdamW(epsilon=0.0, **SETTINGS))
    assert_same_states(train(BertAdamW(epsilon=0.0, **SETTINGS)), keras_adamw)
    assert_same_states(train(ReferenceAdamW(epsilon=0.0, **SETTINGS)), keras_adamw)
