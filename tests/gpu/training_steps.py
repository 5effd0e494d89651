"""Trains a saved pretrainer for a few steps on saved batches and writes each
step's loss: `python -m tests.gpu.training_steps WEIGHTS BATCHES OUT`.

Run in a fresh process, so that the caller picks the device with the
environment (JAX_PLATFORMS=cpu, or CUDA_VISIBLE_DEVICES=-1 for TensorFlow).
If WEIGHTS does not exist yet, the fresh model's weights are written there
first, so that a second run starts from the same ones.
"""

import json
import os
import sys

import keras
import numpy as np

from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.bert_pretrainer import BertPretrainer

weights_path, batches_path, out = sys.argv[1:4]
keras.utils.set_random_seed(0)
pretrainer = BertPretrainer(BertBackbone.from_size("mini", vocabulary_size=30522, dropout=0.0))
pretrainer.compile(learning_rate=1e-3, total_steps=100, warmup_steps=2)  # The recipe, clipping included.
pretrainer.optimizer.build(pretrainer.trainable_variables)
if os.path.exists(weights_path):
    pretrainer.load_weights(weights_path)
else:
    pretrainer.save_weights(weights_path)
arrays = np.load(batches_path)
losses = []
for step in range(int(arrays["steps"])):
    x = {k: arrays[f"{step}_{k}"] for k in ("token_ids", "segment_ids", "padding_mask", "mask_positions")}
    y = {"mlm": arrays[f"{step}_mask_ids"], "nsp": arrays[f"{step}_nsp"]}
    logs = pretrainer.train_on_batch(x, y, sample_weight={"mlm": arrays[f"{step}_mask_weights"]}, return_dict=True)
    losses.append(float(logs["loss"]))
from keras_bert3.distribution.devices import accelerator_type  # noqa: E402

with open(out, "w", encoding="utf-8") as f:
    json.dump({"losses": losses, "device": accelerator_type()}, f)
