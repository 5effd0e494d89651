"""`BertPretrainer.compile(precision=...)`: "auto" trains in bfloat16 exactly
where this machine computes it natively, the step then equals a model built
in `mixed_bfloat16`, and everything outside the step keeps float32."""

import keras
import numpy as np
import pytest

from keras_bert3.distribution.devices import accelerator_type
from keras_bert3.distribution.devices import cpu_has_native_bfloat16
from keras_bert3.models.bert_pretrainer import BertPretrainer
from keras_bert3.models.training_precision import training_dtype_policy
from tests.models.bert_pretrainer_test import pretraining_batch
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


def test_bad_precisions_are_refused():
    with pytest.raises(ValueError, match=r"precision='float16' is not one of \('auto', 'float32', 'mixed_bfloat16'\)"):
        training_dtype_policy("float16", "float32", jit_compile=False)
    with pytest.raises(ValueError, match="asks to train a mixed_float16 model in bfloat16"):
        training_dtype_policy("mixed_bfloat16", "mixed_float16", jit_compile=False)
    model = BertPretrainer(tiny_backbone(120))
    with pytest.raises(ValueError, match="precision='bf16' is not one of"):
        model.compile(precision="bf16")
    assert not model.compiled  # Refused before Keras compiled anything.


def pretrainer(precision, policy=None):
    keras.utils.set_random_seed(0)
    model = BertPretrainer(tiny_backbone(120, dropout=0.0, dtype=policy))
    model.compile(learning_rate=1e-3, total_steps=10, warmup_steps=0, precision=precision)
    return model


def test_a_bfloat16_step_equals_a_model_built_in_bfloat16_and_the_rest_stays_float32():
    x, y, w = pretraining_batch()
    switched = pretrainer("mixed_bfloat16")
    built = pretrainer("auto", policy="mixed_bfloat16")
    built.set_weights(switched.get_weights())
    assert switched.training_dtype_policy == built.training_dtype_policy == "mixed_bfloat16"
    for _ in range(2):
        ours = switched.train_on_batch(x, y, w, return_dict=True)
        theirs = built.train_on_batch(x, y, w, return_dict=True)
        assert ours == pytest.approx(theirs, rel=1e-6)
    for a, b in zip(switched.get_weights(), built.get_weights()):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    # Outside the training step the model is float32: its layers, and its outputs.
    assert {layer.dtype_policy.name for layer in switched.backbone.layers} == {"float32"}
    assert switched.backbone.dtype_policy.name == "float32"
    outputs = switched.predict_on_batch(x)
    assert outputs["mlm"].dtype == np.float32
    float32 = BertPretrainer(tiny_backbone(120, dropout=0.0))  # Never compiled: predict needs no optimizer.
    float32.set_weights(switched.get_weights())
    np.testing.assert_array_equal(outputs["mlm"], float32.predict_on_batch(x)["mlm"])
