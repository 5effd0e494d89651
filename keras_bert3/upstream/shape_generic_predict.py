"""Keras's TensorFlow `predict` step, called through one graph whose every dimension is unknown.

Keras wraps its predict step in `tf.function(reduce_retracing=True)`: the first shapes it meets get graphs of their own,
later ones a shape-generic graph, and the two compute some rows 1 ulp apart (other fusions, other summation orders).
So a text's probabilities depended on what the process had predicted before: a `predict --input` run that resumed
from row 639,937 wrote 25,374 of its rows a bit apart from an uninterrupted run's. Called through one shape-generic
graph from the first batch on, the same batch gives the same bits in any process, and the step is traced once."""

import numpy as np
import tensorflow as tf


class ShapeGenericPredict:
    """`function` (Keras's predict function, a `tf.function`) as one graph per structure of inputs, every dimension
    unknown (numpy arrays, as `predict_on_batch` gives, as tensors); inputs that are not all tensors of known rank (a
    strategy's per-replica values) go to `function` itself."""

    is_shape_generic = True

    def __init__(self, function):
        self._function = function
        self._graphs = {}

    def __call__(self, data):
        data = tf.nest.map_structure(lambda leaf: tf.constant(leaf) if isinstance(leaf, np.ndarray) else leaf, data)
        leaves = tf.nest.flatten(data)
        if not leaves or not all(isinstance(leaf, tf.Tensor) and leaf.shape.rank is not None for leaf in leaves):
            return self._function(data)
        specs = tf.nest.map_structure(lambda leaf: tf.TensorSpec([None] * leaf.shape.rank, leaf.dtype), data)
        key = repr(specs)
        if key not in self._graphs:
            self._graphs[key] = tf.function(self._function.python_function, input_signature=[specs])
        return self._graphs[key](data)
