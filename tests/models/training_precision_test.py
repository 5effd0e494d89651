"""`compile(precision=...)` of the pretrainer and the tasks: "auto" picks the
fastest safe precision for each kind of device (one function of a device
description, `auto_precision`), trains in bfloat16 on this machine exactly
where it computes it natively, the step then equals a model built in
`mixed_bfloat16`, and everything outside the step keeps float32."""

import keras
import numpy as np
import pytest

from keras_bert3.distribution.devices import DeviceDescription
from keras_bert3.distribution.devices import accelerator_type
from keras_bert3.distribution.devices import cpu_has_native_bfloat16
from keras_bert3.distribution.devices import current_device
from keras_bert3.models.bert_classifier import BertClassifier
from keras_bert3.models.bert_pretrainer import BertPretrainer
from keras_bert3.models.training_precision import auto_precision
from keras_bert3.models.training_precision import training_dtype_policy
from tests.test_case import tiny_backbone


def test_auto_picks_bfloat16_where_the_hardware_computes_it():
    native = accelerator_type() == "cpu" and cpu_has_native_bfloat16()
    expected = "mixed_bfloat16" if native else None
    assert training_dtype_policy("auto", "float32", jit_compile=keras.backend.backend() == "jax") == expected
    if keras.backend.backend() == "tensorflow":  # TensorFlow's XLA on a CPU is slower in bfloat16.
        assert training_dtype_policy("auto", "float32", jit_compile=True) is None
    else:  # Eager JAX steps stay float32.
        assert training_dtype_policy("auto", "float32", jit_compile=False) is None
    assert training_dtype_policy("float32", "float32", jit_compile=False) is None
    assert training_dtype_policy("mixed_bfloat16", "float32", jit_compile=False) == "mixed_bfloat16"
    assert training_dtype_policy("auto", "mixed_float16", jit_compile=False) is None  # The builder chose.


GPU = {
    capability: DeviceDescription("gpu", f"a GPU of {capability}", compute_capability=capability)
    for capability in [(6, 0), (7, 0), (7, 5), (8, 0), (8, 9), (9, 0), (10, 0)]
}


@pytest.mark.parametrize("pretraining", [True, False])
@pytest.mark.parametrize("backend, jit_compile", [("jax", True), ("tensorflow", False), ("tensorflow", True)])
@pytest.mark.backend_free
def test_auto_precision_for_each_kind_of_device(pretraining, backend, jit_compile):
    def choice(device):
        return auto_precision(device, backend=backend, jit_compile=jit_compile, pretraining=pretraining)

    # GPUs: bfloat16 tensor cores from compute capability 8.0 (A100, L4, H100, B200) ...
    for capability in [(8, 0), (8, 9), (9, 0), (10, 0)]:
        assert choice(GPU[capability]) == "mixed_bfloat16"
    # ... float16 tensor cores only on 7.x (V100, T4): float16 with loss scaling; none before.
    assert choice(GPU[(7, 0)]) == choice(GPU[(7, 5)]) == "mixed_float16"
    assert choice(GPU[(6, 0)]) == "float32"
    assert choice(DeviceDescription("gpu", "a GPU that reports no compute capability")) == "float32"
    assert choice(DeviceDescription("tpu", "TPU v5 lite")) == "mixed_bfloat16"
    # CPUs: today's rule. Pretraining in bfloat16 where the CPU has it and the
    # step's compiler is fast in it (TensorFlow's graph, JAX's XLA); tasks in float32.
    native, emulated = DeviceDescription("cpu", cpu_bfloat16=True), DeviceDescription("cpu", cpu_bfloat16=False)
    fast_step = jit_compile if backend == "jax" else not jit_compile
    assert choice(native) == ("mixed_bfloat16" if pretraining and fast_step else "float32")
    assert choice(emulated) == choice(DeviceDescription("cpu")) == "float32"


@pytest.mark.backend_free
def test_auto_is_logged_once_and_recorded(caplog, capsys):
    h100 = DeviceDescription("gpu", "NVIDIA H100 80GB HBM3", compute_capability=(9, 0))
    with caplog.at_level("INFO", logger="keras_bert3"):
        assert training_dtype_policy("auto", "float32", jit_compile=True, device=h100) == "mixed_bfloat16"
        assert training_dtype_policy("auto", "float32", jit_compile=True, device=h100) == "mixed_bfloat16"
    assert capsys.readouterr().out == ""  # The library prints nothing; its logger says it.
    printed = [record.getMessage() for record in caplog.records if record.name.startswith("keras_bert3")]
    assert printed == [
        "keras_bert3: precision='auto' trains in mixed_bfloat16 on NVIDIA H100 80GB HBM3, compute "
        "capability 9.0 (weights stay float32); compile(precision='float32') trains in float32."
    ]
    assert training_dtype_policy("float32", "float32", jit_compile=True, device=h100) is None  # One argument away.
    v100 = DeviceDescription("gpu", "Tesla V100-SXM2-16GB", compute_capability=(7, 0))
    assert training_dtype_policy("auto", "float32", jit_compile=True, pretraining=False, device=v100) == "mixed_float16"


def test_the_device_at_hand_is_described():
    device = current_device()
    assert device.platform == accelerator_type()
    if device.platform == "cpu":
        assert device.cpu_bfloat16 == cpu_has_native_bfloat16() and device.compute_capability is None


@pytest.mark.backend_free
def test_bad_precisions_are_refused():
    with pytest.raises(
        ValueError, match=r"precision='float16' is not one of \('auto', 'float32', 'mixed_bfloat16', 'mixed_float16'\)"
    ):
        training_dtype_policy("float16", "float32", jit_compile=False)
    with pytest.raises(ValueError, match="asks to train a mixed_float16 model in another precision"):
        training_dtype_policy("mixed_bfloat16", "mixed_float16", jit_compile=False)
    model = BertPretrainer(tiny_backbone(120))
    with pytest.raises(ValueError, match="precision='bf16' is not one of"):
        model.compile(precision="bf16")
    assert not model.compiled  # Refused before Keras compiled anything.


@pytest.mark.skipif(accelerator_type() == "gpu", reason="float16 is refused where no GPU is")
def test_float16_without_a_gpu_is_refused_with_the_devices_named(tokenizer):
    with pytest.raises(ValueError, match="precision 'mixed_float16' needs a GPU, and .* sees only cpu:0"):
        BertPretrainer(tiny_backbone(120)).compile(precision="mixed_float16")
    classifier = BertClassifier(tiny_backbone(tokenizer.vocabulary_size()), 2, tokenizer=tokenizer, sequence_length=64)
    with pytest.raises(ValueError, match="needs a GPU"):
        classifier.compile(precision="mixed_float16")
    with pytest.raises(ValueError, match="precision='half' is not one of"):
        classifier.compile(precision="half")


@pytest.mark.cpu_numerics
@pytest.mark.slow
def test_tasks_train_in_the_chosen_precision_and_keep_float32_outside_the_step(tokenizer, topics):
    texts, labels = topics["train_texts"][:16], np.array(topics["train_labels"][:16]) % 2

    def classifier(dtype=None):
        keras.utils.set_random_seed(0)
        backbone = tiny_backbone(tokenizer.vocabulary_size(), dropout=0.0, dtype=dtype)
        task = BertClassifier(backbone, 2, tokenizer=tokenizer, dropout=0.0, sequence_length=64, dtype=dtype)
        task.output_dense.kernel.assign(task.output_dense.kernel * 300.0)  # Logits large enough to show rounding.
        return task

    switched, built, float32 = classifier(), classifier("mixed_bfloat16"), classifier()
    assert switched.training_dtype_policy == ("float32" if accelerator_type() == "cpu" else "mixed_bfloat16")
    switched.compile(precision="mixed_bfloat16", learning_rate=1e-3)
    built.compile(learning_rate=1e-3)
    float32.compile(precision="float32", learning_rate=1e-3)
    assert switched.training_dtype_policy == built.training_dtype_policy == "mixed_bfloat16"
    assert float32.training_dtype_policy == "float32"
    batch = keras.tree.map_structure(lambda t: t.numpy(), next(iter(switched.batches(texts, labels, batch_size=16))))
    ours, theirs, reference = (
        model.train_on_batch(*batch, return_dict=True)["loss"] for model in (switched, built, float32)
    )
    assert ours == pytest.approx(theirs, rel=1e-6)  # The step is the bfloat16 model's step ...
    # ... not float32's: a float32 step repeats its loss to the bit, so any difference is bfloat16's
    # rounding (2e-4 with oneDNN's bfloat16 products, 4e-5 with TensorFlow's own on AVX2 CPUs).
    again = classifier()
    again.compile(precision="float32", learning_rate=1e-3)
    assert again.train_on_batch(*batch, return_dict=True)["loss"] == reference
    assert ours != reference
    # Outside the step the model is float32: its layers and its outputs.
    assert {layer.dtype_policy.name for layer in switched.backbone.layers} == {"float32"}
    logits = switched.predict(texts, verbose=0)
    assert logits.dtype == np.float32
    float32.set_weights(switched.get_weights())
    np.testing.assert_array_equal(float32.predict(texts, verbose=0), logits)


@pytest.mark.backend_free
def test_the_command_shows_the_choice_on_stdout(capsys):
    """`keras-bert3` commands show the library's INFO lines as plain lines on
    stdout where the process has set no logging up (pytest has: its handlers
    are set aside here)."""
    import logging

    from keras_bert3.cli import show_library_messages

    root, library = logging.getLogger(), logging.getLogger("keras_bert3")
    saved = root.handlers[:], library.handlers[:], library.level
    root.handlers[:], library.handlers[:] = [], []
    try:
        show_library_messages()
        show_library_messages()  # Once: a second call adds nothing.
        assert len(library.handlers) == 2 and library.propagate
        a100 = DeviceDescription("gpu", "NVIDIA A100-SXM4-80GB", compute_capability=(8, 0))
        assert training_dtype_policy("auto", "float32", jit_compile=True, device=a100) == "mixed_bfloat16"
        assert capsys.readouterr().out.splitlines() == [
            "keras_bert3: precision='auto' trains in mixed_bfloat16 on NVIDIA A100-SXM4-80GB, compute capability 8.0 "
            "(weights stay float32); compile(precision='float32') trains in float32."
        ]
        logging.getLogger("keras_bert3.data").warning("a data warning")
        assert capsys.readouterr() == ("", "a data warning\n")  # Warnings on stderr.
    finally:
        (root.handlers[:], library.handlers[:], library.level) = saved
