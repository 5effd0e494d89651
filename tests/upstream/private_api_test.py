"""Each private Keras, TensorFlow and keras-hub API that keras_bert3/upstream/
relies on still behaves as relied on. An upgrade that changes one fails here."""

import inspect
import os
import re

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_bert3.upstream.adam_moments import adam_moments
from keras_bert3.upstream.compiled_state import learning_rate_schedule
from keras_bert3.upstream.compiled_state import loss_tracker
from keras_bert3.upstream.keras_hub_encoder_parts import transformer_encoder_parts
from keras_bert3.upstream.layer_tree import all_layers
from keras_bert3.upstream.multi_worker_fit import in_multi_worker_mode
from keras_bert3.upstream.multi_worker_fit import model_strategy
from keras_bert3.upstream.private_api import require_private
from keras_bert3.upstream.replica_clipping import ClipAcrossReplicas
from keras_bert3.upstream.string_input_layer import StringInputLayer
from tests.cpu_flags import cpu_flags


@pytest.mark.backend_free
def test_a_missing_private_api_is_a_clear_import_error():
    class Upstream:
        pass

    with pytest.raises(ImportError, match=r"relies on .*Upstream\._gone, a private API that keras .* does not have"):
        require_private(Upstream, "_gone", package=keras, why="a test")
    require_private(Upstream(), "__init__", package=keras, why="a test")  # Present: no error.


def test_string_input_layers_receive_strings_unconverted():
    class Lengths(StringInputLayer):
        def call(self, texts):
            assert isinstance(texts, (list, tf.Tensor, tf.RaggedTensor)), type(texts)
            return tf.strings.length(texts)

    layer = Lengths()
    np.testing.assert_array_equal(layer(["ab", "cde"]), [2, 3])
    np.testing.assert_array_equal(layer(tf.constant(["ab", ""])), [2, 0])
    np.testing.assert_array_equal(layer(tf.ragged.constant([["a"], ["bc", "d"]])).flat_values, [1, 2, 1])


def test_the_multi_worker_fit_hooks_are_where_the_workaround_overrides_them():
    model = keras.Sequential([keras.layers.Dense(1)])
    assert model_strategy(model) is None and not in_multi_worker_mode(model)
    if (
        keras.backend.backend() == "tensorflow"
    ):  # Keras' TensorFlow trainer has the hook (JAX trains without strategies).
        assert list(inspect.signature(keras.Model._maybe_symbolic_build).parameters) == [
            "self",
            "iterator",
            "data_batch",
        ]
        strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
        with strategy.scope():
            model = keras.Sequential([keras.layers.Dense(1)])
        assert model_strategy(model) is strategy
        assert strategy.extended._in_multi_worker_mode() is False and not in_multi_worker_mode(model)


def test_keras_clips_through_the_hook_that_replica_clipping_overrides():
    calls = []

    class Recording(ClipAcrossReplicas, keras.optimizers.SGD):
        def _clip_gradients(self, grads):
            calls.append(len(grads))
            return super()._clip_gradients(grads)

    variable = keras.Variable(np.zeros(2, "float32"))
    optimizer = Recording(learning_rate=1.0, global_clipnorm=1.0)
    optimizer.apply_gradients([(keras.ops.convert_to_tensor(np.array([30.0, 40.0], "float32")), variable)])
    assert calls == [1]
    np.testing.assert_allclose(variable.numpy(), [-0.6, -0.8], rtol=1e-6)  # Clipped from norm 50 to 1.


def test_adam_moments_are_the_slots_adam_updates():
    variable = keras.Variable(np.zeros(3, "float32"))
    optimizer = keras.optimizers.Adam(learning_rate=0.1, beta_1=0.9, beta_2=0.99)
    gradient = np.array([1.0, -2.0, 0.5], "float32")
    optimizer.apply_gradients([(keras.ops.convert_to_tensor(gradient), variable)])
    m, v = adam_moments(optimizer, variable)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(m), 0.1 * gradient, rtol=1e-6)  # (1 - beta_1) g
    np.testing.assert_allclose(keras.ops.convert_to_numpy(v), 0.01 * gradient**2, rtol=1e-6)  # (1 - beta_2) g^2


@pytest.mark.backend_free
def test_keras_hub_encoder_parts_are_its_sublayers():
    import keras_hub

    encoder = keras_hub.layers.TransformerEncoder(intermediate_dim=16, num_heads=2)
    encoder(np.zeros((1, 3, 8), "float32"))
    parts = transformer_encoder_parts(encoder)
    assert tuple(parts["attention"].query_dense.kernel.shape) == (8, 2, 4)  # (hidden, heads, head_dim)
    assert tuple(parts["intermediate_dense"].kernel.shape) == (8, 16)
    assert tuple(parts["output_dense"].kernel.shape) == (16, 8)
    assert tuple(parts["attention_layer_norm"].gamma.shape) == tuple(parts["output_layer_norm"].gamma.shape) == (8,)
    # Every weight of the encoder is in one of the parts.
    in_parts = {id(w) for part in parts.values() for w in part.weights}
    assert all(id(w) in in_parts for w in encoder.weights)


@pytest.mark.backend_free
def test_data_service_servers_stop_when_asked():
    """The dispatcher's `GetWorkers` lists no worker, then the one that
    registered; `_stop` stops a dispatcher and its worker (the port then
    refuses), and a second stop, the one in the destructor, is harmless."""
    from keras_bert3.distribution.data_service_dispatcher import check_dispatcher_answers
    from keras_bert3.distribution.data_service_dispatcher import check_dispatcher_has_workers
    from keras_bert3.upstream.data_service_stop import stop_within
    from keras_bert3.upstream.data_service_workers import registered_workers

    service = tf.data.experimental.service
    dispatcher = service.DispatchServer()
    address = dispatcher.target.split("://")[-1]
    check_dispatcher_answers(address, timeout=30)
    assert registered_workers(address) == []
    worker = service.WorkerServer(service.WorkerConfig(dispatcher_address=address, worker_address="localhost:%port%"))
    (registered,) = check_dispatcher_has_workers(address, timeout=30)  # Asks `registered_workers` till it registers.
    assert registered.startswith("localhost:") and registered != f"localhost:{address.rsplit(':', 1)[-1]}"
    stop_within(worker, 10, "worker")
    stop_within(dispatcher, 10, "dispatcher")
    with pytest.raises(ConnectionError):
        check_dispatcher_answers(address, timeout=2)
    dispatcher._stop()
    worker._stop()


def test_all_layers_reaches_the_layers_that_layers_build():
    from tests.test_case import tiny_backbone

    backbone = tiny_backbone(50)
    layers = all_layers(backbone)
    assert len({id(layer) for layer in layers}) == len(layers) and layers[0] is backbone  # Each once.
    block = backbone.encoder_blocks[0]
    for sublayer in (block, block.qkv_dense, block.output_layer_norm, block.probs_dropout, backbone.token_embedding):
        assert any(layer is sublayer for layer in layers), sublayer.path


@pytest.mark.backend_free
def test_jax_writes_exports_for_the_installed_tensorflow_inside_the_context():
    """JAX writes StableHLO for readers four weeks old, newer than TensorFlow
    may read; inside `written_for_installed_tensorflow` it writes the older of
    the two versions, and outside (after) its own again."""
    jax = pytest.importorskip("jax")
    from tensorflow.compiler.mlir.stablehlo import stablehlo

    from keras_bert3.upstream.stablehlo_target import version_tuple
    from keras_bert3.upstream.stablehlo_target import written_for_installed_tensorflow

    def written():  # The version an artifact was written for: its bytecode's producer, `StableHLO_v<version>`.
        exported = jax.export.export(jax.jit(lambda x: jax.numpy.tanh(x) @ x))(jax.ShapeDtypeStruct((4, 4), "float32"))
        return re.search(rb"StableHLO_v([0-9]+(?:\.[0-9]+)*)", exported.mlir_module_serialized).group(1).decode()

    jax_choice = written()
    with written_for_installed_tensorflow():
        inside = written()
    assert inside == min(jax_choice, stablehlo.get_current_version(), key=version_tuple)
    assert written() == jax_choice


def test_weights_written_through_a_file_object_load_as_keras_writes_them(tmp_path):
    """`save_weights_to_file_object` writes what `model.save_weights` does:
    `model.load_weights` reads back every weight and the optimizer's state."""
    import io

    from keras_bert3.upstream.weights_to_file_object import save_weights_to_file_object

    def model():
        built = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3), keras.layers.LayerNormalization()])
        built.compile(optimizer="adam", loss="mse")
        built.optimizer.build(built.trainable_variables)
        return built

    written = model()
    written.fit(np.random.default_rng(0).normal(size=(8, 4)), np.ones((8, 3)), epochs=2, verbose=0)
    buffer = io.BytesIO()
    save_weights_to_file_object(written, buffer)
    (tmp_path / "model.weights.h5").write_bytes(buffer.getvalue())
    read = model()
    read.load_weights(str(tmp_path / "model.weights.h5"))
    for mine, theirs in zip(
        read.weights + read.optimizer.variables, written.weights + written.optimizer.variables, strict=True
    ):
        np.testing.assert_array_equal(
            keras.ops.convert_to_numpy(mine), keras.ops.convert_to_numpy(theirs), err_msg=mine.path
        )
    assert int(keras.ops.convert_to_numpy(read.optimizer.iterations)) == 2


@pytest.mark.backend_free  # Not `cpu_numerics`: under tests/avx2_only.sh the setting is given, nothing new runs.
@pytest.mark.slow
def test_the_onednn_flag_follows_tensorflows_setting():
    """`TF_ENABLE_ONEDNN_OPTS=1` turns it on (x86 builds), `=0` off. Unset, on
    Linux, TensorFlow turns it on only on CPUs with one of the instructions
    its `DefaultOneDnnPolicy` names: so it is off on an AVX2-only CPU such as
    AMD's EPYC Zen 3."""
    import platform
    import subprocess
    import sys

    from keras_bert3.upstream.onednn_flag import tensorflow_uses_onednn

    def in_a_process_with(setting: str) -> bool:
        script = "from keras_bert3.upstream.onednn_flag import tensorflow_uses_onednn; print(tensorflow_uses_onednn())"
        done = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            env=dict(os.environ, TF_ENABLE_ONEDNN_OPTS=setting),
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.split()[-1] == "True"

    x86 = platform.machine() in ("x86_64", "AMD64")
    if "TF_ENABLE_ONEDNN_OPTS" not in os.environ and x86 and sys.platform == "linux":
        policy = {"avx512_vnni", "avx512_bf16", "avx_vnni", "amx_tile", "amx_int8", "amx_bf16"}
        assert tensorflow_uses_onednn() == bool(cpu_flags() & policy)
    assert in_a_process_with("1") == x86
    assert not in_a_process_with("0")


def test_the_loss_tracker_is_the_loss_metric_and_the_schedule_is_the_one_given():
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    assert loss_tracker(model) is None  # Before compile.
    schedule = keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    optimizer = keras.optimizers.Adam(learning_rate=schedule)
    model.compile(optimizer=optimizer, loss="mse")
    model.fit(np.ones((4, 2)), np.zeros((4, 1)), verbose=0)
    assert model.metrics[0] is loss_tracker(model) and loss_tracker(model).name == "loss"
    assert learning_rate_schedule(optimizer) is schedule
    assert learning_rate_schedule(keras.optimizers.Adam(learning_rate=0.5)) == 0.5


@pytest.mark.backend_free
def test_the_cudnn_function_with_dropout_is_the_one_jaxs_public_attention_calls():
    """The private function keras_bert3 calls for dropout inside cuDNN's
    attention is the one `jax.nn.dot_product_attention(implementation="cudnn")`
    calls (so the masks and lengths are passed as JAX passes them), and it
    still takes a trace-time `seed` and a `dropout_rate`. On a GPU,
    bench/gpu_pretraining_step.py's `check-fused` row checks its masks."""
    from jax._src.nn import functions as jax_nn_functions

    from keras_bert3.upstream.cudnn_attention_dropout import cudnn_attention

    assert jax_nn_functions.cudnn_dot_product_attention is cudnn_attention.dot_product_attention
    parameters = inspect.signature(cudnn_attention.dot_product_attention).parameters
    assert parameters["seed"].kind is inspect.Parameter.KEYWORD_ONLY
    assert parameters["dropout_rate"].default == 0.0


@pytest.mark.backend_free
@pytest.mark.parametrize(
    "xla_flags, runs",
    [
        ("", False),  # XLA's default command buffers take cuDNN's calls: it aborted on an H200.
        ("--xla_gpu_enable_command_buffer=-CUDNN", True),  # The flag the H200 run used.
        ("--xla_gpu_enable_command_buffer=", True),  # No command buffers at all.
        ("--xla_gpu_enable_command_buffer=FUSION,CUBLAS", True),
        ("--xla_gpu_enable_command_buffer=FUSION,CUDNN", False),
        ("--xla_gpu_enable_command_buffer=-CUDNN,+CUDNN", False),
        ("--xla_gpu_enable_command_buffer=+CUDNN --xla_gpu_enable_command_buffer=-CUDNN", True),
    ],
)
def test_cudnn_dropout_runs_only_where_command_buffers_leave_cudnn_out(monkeypatch, xla_flags, runs):
    from keras_bert3.upstream.cudnn_attention_dropout import dropout_runs_in_cudnn

    monkeypatch.setenv("XLA_FLAGS", xla_flags)
    assert dropout_runs_in_cudnn() is runs


@pytest.mark.slow
@pytest.mark.backend_free
def test_the_command_buffer_flag_is_set_before_jax_starts_and_never_after():
    """A fresh process: the flag is added while JAX's backends have not
    started (and XLA then reads it), a user's own flag is kept, and once JAX
    computes nothing changes."""
    import subprocess
    import sys

    script = """
import os, jax
from keras_bert3.upstream.cudnn_attention_dropout import leave_cudnn_out_of_command_buffers as leave
os.environ["XLA_FLAGS"] = "--xla_cpu_use_thunk_runtime=true"
print(leave(), os.environ["XLA_FLAGS"])
os.environ["XLA_FLAGS"] = "--xla_gpu_enable_command_buffer=FUSION,CUDNN"
print(leave(), os.environ["XLA_FLAGS"])
os.environ["XLA_FLAGS"] = ""
jax.numpy.ones(2).block_until_ready()
print(leave(), repr(os.environ["XLA_FLAGS"]))
"""
    lines = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert lines == [
        "True --xla_cpu_use_thunk_runtime=true --xla_gpu_enable_command_buffer=-CUDNN",
        "False --xla_gpu_enable_command_buffer=FUSION,CUDNN",
        "False ''",
    ]


def test_a_fit_starts_at_the_epoch_a_callback_sets_at_its_beginning():
    from keras_bert3.upstream.compiled_state import start_fit_at_epoch

    class Resume(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            start_fit_at_epoch(self.model, 2)

    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    epochs = []
    log_epochs = keras.callbacks.LambdaCallback(on_epoch_begin=lambda epoch, logs: epochs.append(epoch))
    model.fit(np.ones((8, 3)), np.ones((8, 1)), epochs=4, verbose=0, callbacks=[Resume(), log_epochs])
    assert epochs == [2, 3]


def test_variables_made_for_loaded_values_take_them_and_the_rest_get_their_initializers():
    """Within `values_loaded_next`, a layer's variables hold no value (nothing is drawn for them); `give_value` sets
    one. On leaving, the others hold what their initializers give outside it (seeded: the same numbers), and a later
    symbolic call, whose stateless scope initializes the variables Keras left without values, finds none."""
    from keras_bert3.upstream.loaded_variables import give_value
    from keras_bert3.upstream.loaded_variables import values_loaded_next

    def dense():
        return keras.layers.Dense(
            4, kernel_initializer=keras.initializers.RandomNormal(seed=3), bias_initializer="ones"
        )

    reference = dense()
    reference.build((None, 3))
    layer = dense()
    with values_loaded_next():
        layer.build((None, 3))
        assert layer.kernel._value is None and layer.bias._value is None
        give_value(layer.kernel, np.full((3, 4), 2.0, "float32"))
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(layer.kernel), np.full((3, 4), 2.0))
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(layer.bias), np.ones(4))
    unloaded = dense()
    with values_loaded_next():
        unloaded.build((None, 3))
    assert unloaded.kernel._value is not None and layer.bias._value is not None  # Given on leaving.
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(unloaded.kernel), reference.kernel.numpy())
    assert layer(keras.Input((3,))).shape == (None, 4)
    give_value(layer.bias, np.zeros(4, "float32"))  # A variable that has a value: assigned.
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(layer(np.ones((1, 3), "float32"))), np.full((1, 4), 6.0))
