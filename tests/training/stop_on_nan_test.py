"""A NaN loss stops training at once with the step number; the last good
checkpoint is not overwritten."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_bert3.distribution.devices import accelerator_type
from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.bert_pretrainer import BertPretrainer
from keras_bert3.training.resumable_backup import WEIGHTS_FILE
from keras_bert3.training.resumable_backup import ResumableBackup
from keras_bert3.training.resumable_backup import latest_checkpoint
from keras_bert3.training.stop_on_nan import StopOnNaN
from tests.models.bert_pretrainer_test import pretraining_batch


@pytest.mark.slow
def test_nan_loss_stops_with_the_step_and_keeps_the_checkpoint(tmp_path):
    pretrainer = BertPretrainer(BertBackbone(120, 2, 2, 32, 64, max_sequence_length=16))
    pretrainer.compile(learning_rate=1e-3, total_steps=100)
    backup = str(tmp_path / "backup")
    callbacks = [StopOnNaN(backup), ResumableBackup(backup)]
    data = tf.data.Dataset.from_tensors(pretraining_batch()).repeat()
    pretrainer.fit(data, epochs=2, steps_per_epoch=3, callbacks=callbacks, verbose=0)
    checkpoint = os.path.join(latest_checkpoint(backup), WEIGHTS_FILE)
    assert checkpoint.endswith(os.path.join("checkpoint-2", WEIGHTS_FILE))
    good = open(checkpoint, "rb").read()

    # Broken data: NaN mask weights make the loss NaN at the next step.
    x, y, w = pretraining_batch()
    broken = tf.data.Dataset.from_tensors((x, y, {"mlm": np.full_like(w["mlm"], np.nan)})).repeat()
    with pytest.raises(FloatingPointError, match=f"at step 7.*{backup}"):
        pretrainer.fit(broken, epochs=4, steps_per_epoch=3, callbacks=callbacks, verbose=0)
    assert latest_checkpoint(backup) == os.path.dirname(checkpoint)
    assert open(checkpoint, "rb").read() == good


# float16 is for GPUs (compile refuses it elsewhere: XLA on CPU has no float16
# matmul, TensorFlow's graph emulates it); bfloat16 runs everywhere.
POLICIES = ["mixed_bfloat16"] + (["mixed_float16"] if accelerator_type() == "gpu" else [])


@pytest.mark.slow
@pytest.mark.parametrize("policy", POLICIES)
def test_mixed_precision_trains(policy):
    backbone = BertBackbone(120, 2, 2, 32, 64, max_sequence_length=16, dropout=0.0, dtype=policy)
    pretrainer = BertPretrainer(backbone)
    pretrainer.compile(learning_rate=2e-3, total_steps=40, warmup_steps=2)
    if policy == "mixed_float16":
        assert isinstance(pretrainer.optimizer, keras.optimizers.LossScaleOptimizer)
    data = tf.data.Dataset.from_tensors(pretraining_batch()).repeat(40)
    history = pretrainer.fit(data, verbose=0, epochs=4, steps_per_epoch=10).history
    assert history["mlm_loss"][-1] < history["mlm_loss"][0] - 0.5
    assert pretrainer.backbone.output["sequence_output"].dtype == policy.split("_")[1]
