"""BertPretrainer: heads and loss against Hugging Face BertForPreTraining, the
training step on both backends, presets and bad input."""

import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_bert3.distribution.devices import accelerator_type
from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.bert_pretrainer import BertPretrainer
from tests import warm_commands
from tests.hf_helpers import max_abs_diff
from tests.hf_helpers import tiny_hf_config
from tests.reference import import_reference

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pretraining_batch(vocabulary_size=120, batch=4, length=12, predictions=3, seed=0):
    """A batch as the data pipeline yields it: masked positions inside the real
    tokens, padded predictions with zero weight."""
    rng = np.random.default_rng(seed)
    lengths = np.array([length, length - 3, 6, 8][:batch])
    mask = (np.arange(length)[None, :] < lengths[:, None]).astype("int32")
    positions = np.stack([np.sort(rng.choice(np.arange(1, n - 1), predictions, replace=False)) for n in lengths])
    weights = np.ones((batch, predictions), "float32")
    weights[2, -1] = 0.0  # A padded prediction slot.
    positions[2, -1] = 0
    return (
        {
            "token_ids": (rng.integers(5, vocabulary_size, (batch, length)) * mask).astype("int32"),
            "segment_ids": ((np.arange(length)[None, :] >= 5) * mask).astype("int32"),
            "padding_mask": mask,
            "mask_positions": positions.astype("int32"),
        },
        {
            "mlm": rng.integers(5, vocabulary_size, (batch, predictions)).astype("int32"),
            "nsp": np.array([0, 1, 1, 0][:batch], "int32"),
        },
        {"mlm": weights},
    )


@pytest.fixture
def hf_pretraining_checkpoint(tmp_path):
    transformers = import_reference("transformers")
    import_reference("torch").manual_seed(0)
    reference = transformers.BertForPreTraining(
        tiny_hf_config(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    )
    reference.save_pretrained(tmp_path)
    return reference.eval(), str(tmp_path)


@pytest.mark.slow
def test_heads_and_joint_loss_equal_hugging_face(hf_pretraining_checkpoint):
    torch = import_reference("torch")
    reference, path = hf_pretraining_checkpoint
    x, y, sample_weight = pretraining_batch()
    pretrainer = BertPretrainer.from_preset(path)
    ours = pretrainer.predict(x, verbose=0)

    labels = np.full(x["token_ids"].shape, -100)
    for row in range(4):
        for slot in range(3):
            if sample_weight["mlm"][row, slot]:
                labels[row, x["mask_positions"][row, slot]] = y["mlm"][row, slot]
    with torch.no_grad():
        theirs = reference(
            input_ids=torch.tensor(x["token_ids"], dtype=torch.long),
            token_type_ids=torch.tensor(x["segment_ids"], dtype=torch.long),
            attention_mask=torch.tensor(x["padding_mask"], dtype=torch.long),
            labels=torch.tensor(labels),
            next_sentence_label=torch.tensor(y["nsp"], dtype=torch.long),
        )
    expected_mlm = np.take_along_axis(theirs.prediction_logits.numpy(), x["mask_positions"][:, :, None], axis=1)
    assert max_abs_diff(ours["mlm"], expected_mlm) < 1e-4
    assert max_abs_diff(ours["nsp"], theirs.seq_relationship_logits) < 1e-4
    loss = pretrainer.compute_loss(x, y, ours, sample_weight, training=False)
    assert abs(float(keras.ops.convert_to_numpy(loss)) - float(theirs.loss)) < 1e-4


@pytest.mark.slow
def test_fit_reports_the_pretraining_metrics_and_learns(recwarn):
    backbone = BertBackbone(120, 2, 2, 32, 64, max_sequence_length=16, dropout=0.0)
    pretrainer = BertPretrainer(backbone)
    pretrainer.compile(learning_rate=2e-3, total_steps=60, warmup_steps=3)
    data = tf.data.Dataset.from_tensors(pretraining_batch()).repeat(60)
    history = pretrainer.fit(data, epochs=1, verbose=0).history
    assert not [w for w in recwarn if "shuffle" in str(w.message)]  # Keras' "shuffle=True ... ignored" for datasets.
    assert sorted(history) == ["loss", "mlm_accuracy", "mlm_loss", "nsp_accuracy", "nsp_loss"]
    before = pretrainer.evaluate(tf.data.Dataset.from_tensors(pretraining_batch()), verbose=0, return_dict=True)
    first = BertPretrainer(BertBackbone(120, 2, 2, 32, 64, max_sequence_length=16))
    first.compile()
    start = first.evaluate(tf.data.Dataset.from_tensors(pretraining_batch()), verbose=0, return_dict=True)
    assert before["mlm_loss"] < start["mlm_loss"] - 1.0
    assert before["mlm_accuracy"] > 0.5 > start["mlm_accuracy"]
    assert before["nsp_accuracy"] == 1.0
    assert abs(before["loss"] - before["mlm_loss"] - before["nsp_loss"]) < 1e-5


def test_without_nsp_only_the_mlm_objective():
    pretrainer = BertPretrainer(BertBackbone(120, 2, 2, 32, 64, max_sequence_length=16), nsp=False)
    pretrainer.compile()
    x, y, w = pretraining_batch()
    logs = pretrainer.evaluate(tf.data.Dataset.from_tensors((x, {"mlm": y["mlm"]}, w)), verbose=0, return_dict=True)
    assert sorted(logs) == ["loss", "mlm_accuracy", "mlm_loss"]
    assert "nsp" not in pretrainer.output


def two_training_steps(preset: str) -> np.ndarray:
    """The losses of the first two steps of the BERT recipe from `preset`."""
    pretrainer = BertPretrainer.from_preset(preset)
    pretrainer.compile(learning_rate=1e-4, total_steps=10, warmup_steps=0, precision="float32")  # BERT's peak rate.
    x, y, w = pretraining_batch()
    return np.array([pretrainer.train_on_batch(x, y, w, return_dict=True)["loss"] for _ in range(2)], dtype="float64")


RUN_STEPS_ON_THE_OTHER_BACKEND = """
import sys, numpy as np
from tests.models.bert_pretrainer_test import two_training_steps
np.save(sys.argv[2], two_training_steps(sys.argv[1]))
"""


@pytest.mark.both_backends
@pytest.mark.slow
def test_one_training_step_is_the_same_on_tensorflow_and_jax(tmp_path, hf_pretraining_checkpoint):
    """This backend here, the other in a subprocess (the backend is fixed per process)."""
    _, path = hf_pretraining_checkpoint
    here = keras.backend.backend()
    other = {"tensorflow": "jax", "jax": "tensorflow"}[here]
    process = warm_commands.Popen(
        [sys.executable, "-c", RUN_STEPS_ON_THE_OTHER_BACKEND, path, str(tmp_path / "other.npy")],
        cwd=REPO,
        env=dict(os.environ, KERAS_BACKEND=other),
        stderr=subprocess.PIPE,
    )
    losses = {here: two_training_steps(path)}
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr.decode()[-3000:]
    losses[other] = np.load(tmp_path / "other.npy")
    # Step 1: the same forward pass; step 2: after one AdamW update.
    assert losses["tensorflow"][1] < losses["tensorflow"][0]
    np.testing.assert_allclose(losses["tensorflow"], losses["jax"], atol=1e-5, rtol=0)


def test_preset_round_trip_keeps_the_heads(tmp_path, hf_pretraining_checkpoint):
    _, path = hf_pretraining_checkpoint
    pretrainer = BertPretrainer.from_preset(path)
    pretrainer.save_to_preset(str(tmp_path / "preset"))
    restored = BertPretrainer.from_preset(str(tmp_path / "preset"))
    x, _, _ = pretraining_batch()
    expected, actual = pretrainer.predict(x, verbose=0), restored.predict(x, verbose=0)
    for key in expected:
        np.testing.assert_array_equal(actual[key], expected[key])
    # The same directory is a backbone preset for the task models.
    backbone = BertBackbone.from_preset(str(tmp_path / "preset"))
    assert backbone.count_params() == pretrainer.backbone.count_params()


@pytest.mark.backend_free
def test_compile_keeps_losses_and_metrics_its_own():
    pretrainer = BertPretrainer(BertBackbone(120, 2, 2, 32, 64, max_sequence_length=16))
    with pytest.raises(ValueError, match="remove `loss=`"):
        pretrainer.compile(loss="mse")
    optimizer = keras.optimizers.SGD(0.1)
    pretrainer.compile(optimizer=optimizer)
    assert pretrainer.optimizer is optimizer


@pytest.mark.slow
def test_settings_this_machine_cannot_run_well_are_named_at_compile():
    if accelerator_type() != "gpu":  # float16 needs a GPU: refused, naming the devices there are.
        backbone = BertBackbone(120, 2, 2, 32, 64, max_sequence_length=16, dtype="mixed_float16")
        with pytest.raises(ValueError, match="'mixed_float16' needs a GPU.*cpu:0.*mixed_bfloat16"):
            BertPretrainer(backbone).compile()
    # One layer and plain SGD: eager JAX compiles each op of the step on first use (13 s, not 18 s with AdamW).
    pretrainer = BertPretrainer(BertBackbone(120, 1, 2, 32, 64, max_sequence_length=16))
    sgd = keras.optimizers.SGD(0.01)
    if keras.backend.backend() == "jax":  # Eager steps on JAX: warned, still trains.
        with pytest.warns(UserWarning, match="jit_compile=False on JAX runs the training step eagerly"):
            pretrainer.compile(optimizer=sgd, jit_compile=False)
    else:
        pretrainer.compile(optimizer=sgd, jit_compile=False)
    assert "loss" in pretrainer.fit(tf.data.Dataset.from_tensors(pretraining_batch()), verbose=0).history


@pytest.mark.slow
def test_datasets_lacking_a_part_are_named():
    pretrainer = BertPretrainer(BertBackbone(120, 2, 2, 32, 64, max_sequence_length=16))
    pretrainer.compile()
    x, y, w = pretraining_batch()
    with pytest.raises(ValueError, match="nsp=True but the targets have no 'nsp'"):
        pretrainer.fit(tf.data.Dataset.from_tensors((x, {"mlm": y["mlm"]}, w)), verbose=0)
    with pytest.raises(ValueError, match="yield \\(x, y, sample_weight\\) triples"):
        pretrainer.fit(tf.data.Dataset.from_tensors((x, y)), verbose=0)
    without_positions = {k: v for k, v in x.items() if k != "mask_positions"}
    with pytest.raises(ValueError, match="inputs lack \\['mask_positions'\\]"):
        pretrainer.evaluate(tf.data.Dataset.from_tensors((without_positions, y, w)), verbose=0)
    # Nothing was traced: the same model still trains on good data.
    assert "loss" in pretrainer.fit(tf.data.Dataset.from_tensors((x, y, w)), verbose=0).history
