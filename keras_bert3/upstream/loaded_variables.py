"""Models built to receive loaded weights, without first drawing the random values the weights replace.

Building a model draws each variable's initial value: for a checkpoint's model, millions of random numbers that the
checkpoint then overwrites (on JAX each initializer also compiles a program per shape). Within `values_loaded_next()`,
a variable that a layer makes holds no value yet: Keras's deferred initialization, which it uses for variables made
while tracing (`keras.StatelessScope(initialize_variables=False)`). `give_value` sets a variable's value, whether it has
one or not; on leaving, every variable still without one gets its initializer's, as Keras would have given it (the
seeds of Keras's random initializers are drawn when the initializer is made, not when it is called, so the random
values are the same).

Private APIs (Keras): a variable's `_value` (None until it has a value), `_initializer`, `_initialize(value)` and
`_convert_to_tensor(value, dtype)`; the list of variables without values, the global attribute
"uninitialized_variables" of `keras.src.backend.common.global_state`, which
`keras.src.backend.common.variables.initialize_all_variables` empties."""

import contextlib

import keras
from keras.src.backend.common import global_state
from keras.src.backend.common.stateless_scope import in_stateless_scope
from keras.src.backend.common.variables import initialize_all_variables

from keras_bert3.upstream.private_api import require_private

PENDING = "uninitialized_variables"

for _name in ("_initialize", "_convert_to_tensor"):
    require_private(keras.Variable, _name, package=keras, why="loading a checkpoint without drawing random weights")


@contextlib.contextmanager
def values_loaded_next():
    """Variables made within get no value until `give_value` gives them one; on leaving, those without one get their
    initializer's. Inside another stateless scope (a trace), variables are made as usual."""
    if in_stateless_scope():
        yield
        return
    try:
        with keras.StatelessScope(initialize_variables=False):
            yield
    finally:
        pending = global_state.get_global_attribute(PENDING) or []
        global_state.set_global_attribute(PENDING, [v for v in pending if v._value is None])
        initialize_all_variables()


def give_value(variable, value) -> None:
    """Sets `variable` to `value` (an array of its shape), converted to its dtype."""
    if variable._value is None:  # Made within `values_loaded_next`.
        variable._initialize(variable._convert_to_tensor(value, dtype=variable.dtype))
        variable._initializer = None
    else:
        variable.assign(value)
