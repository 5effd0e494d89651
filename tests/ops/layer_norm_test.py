"""`layer_norm` gives `layer_norm_reference`'s values (Keras' LayerNorm) on
rows and on 3-D tensors, in float32 and bfloat16, training or not; and on
TensorFlow with oneDNN, TensorFlow's own graph optimizer turns its inference
form into one `_MklLayerNorm` kernel, which is what it is for."""

import keras
import numpy as np
import pytest

from keras_bert3.distribution.devices import onednn_enabled
from keras_bert3.layers.fused_layer_normalization import FusedLayerNormalization
from keras_bert3.ops.layer_norm import layer_norm
from keras_bert3.ops.layer_norm import layer_norm_reference
from tests.ops.gradients import as_float32

BFLOAT16_STEP = 2.0**-8  # bfloat16 keeps 8 significant bits.
HIDDEN = 48

pytestmark = pytest.mark.cpu_numerics  # Kernels against references: tests/cpu_kind_test.py.


def inputs(shape, dtype, seed=0):
    """Activations with an offset and a spread per row, as a residual sum
    has, and gamma and beta of both signs."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape) * rng.uniform(0.5, 4, size=shape[:-1] + (1,)) + rng.normal(size=shape[:-1] + (1,))
    gamma, beta = rng.normal(1, 0.5, size=HIDDEN), rng.normal(0, 0.5, size=HIDDEN)
    return [keras.ops.cast(value, dtype) for value in (x, gamma, beta)]


@pytest.mark.parametrize("shape", [(37, HIDDEN), (3, 11, HIDDEN)])
@pytest.mark.parametrize("training", [False, True])
def test_float32_gives_the_reference_values(shape, training):
    x, gamma, beta = inputs(shape, "float32")
    ours = layer_norm(x, gamma, beta, 1e-12, training=training)
    assert tuple(ours.shape) == shape and ours.dtype == x.dtype
    np.testing.assert_allclose(as_float32(ours), as_float32(layer_norm_reference(x, gamma, beta, 1e-12)), atol=1e-5)


@pytest.mark.parametrize("shape", [(37, HIDDEN), (3, 11, HIDDEN)])
def test_bfloat16_gives_the_reference_values_within_rounding(shape):
    x, gamma, beta = inputs(shape, "bfloat16")
    ours = layer_norm(x, gamma, beta, 1e-12, training=False)
    expected = as_float32(layer_norm_reference(x, gamma, beta, 1e-12))
    assert ours.dtype == x.dtype
    # The normalized value may be rounded before gamma and beta apply: two roundings at most.
    np.testing.assert_allclose(as_float32(ours), expected, rtol=0, atol=2 * BFLOAT16_STEP * np.abs(expected).max())


def test_the_layer_is_keras_layer_normalization_with_the_same_weights():
    x, gamma, beta = inputs((5, 7, HIDDEN), "float32")
    ours, theirs = FusedLayerNormalization(epsilon=1e-6), keras.layers.LayerNormalization(epsilon=1e-6)
    for layer in (ours, theirs):
        layer.build((None, None, HIDDEN))
        layer.set_weights([keras.ops.convert_to_numpy(gamma), keras.ops.convert_to_numpy(beta)])
    assert [w.path.split("/")[-1] for w in ours.weights] == [w.path.split("/")[-1] for w in theirs.weights]
    for training in (False, True):
        np.testing.assert_allclose(as_float32(ours(x, training=training)), as_float32(theirs(x)), atol=1e-5)


@pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="TensorFlow's graph optimizer")
def test_tensorflow_fuses_the_inference_form_into_one_kernel():
    import tensorflow as tf
    from tensorflow.core.protobuf import config_pb2
    from tensorflow.python.grappler import tf_optimizer
    from tensorflow.python.training import saver

    if not onednn_enabled():
        pytest.skip(
            "TensorFlow runs without oneDNN here (not an x86 build, TF_ENABLE_ONEDNN_OPTS=0 or an AVX2-only CPU)."
        )
    _, gamma, beta = inputs((2, HIDDEN), "float32")

    def optimized_ops(training):
        function = tf.function(lambda x: layer_norm(x, gamma, beta, 1e-12, training=training))
        graph = function.get_concrete_function(tf.TensorSpec((None, HIDDEN), tf.float32)).graph
        meta_graph = saver.export_meta_graph(graph_def=graph.as_graph_def(), graph=graph)
        for output in graph.outputs:
            meta_graph.collection_def["train_op"].node_list.value.append(output.op.name)
        optimized = tf_optimizer.OptimizeGraph(config_pb2.ConfigProto(), meta_graph)
        return sorted(node.op for node in optimized.node)

    assert "_MklLayerNorm" in optimized_ops(training=False)
    assert "_MklLayerNorm" not in optimized_ops(training=True)  # Keras' ops, as the reference.
