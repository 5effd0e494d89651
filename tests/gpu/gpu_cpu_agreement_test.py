"""The same training steps give the same losses on the GPU as on the CPU
(float32; within 1e-3 relative: the GPU's matmuls use TF32 by default)."""

import json
import os
import subprocess
import sys

import keras
import numpy as np

from keras_bert3.data.pretraining_dataset import pretraining_dataset
from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
from keras_bert3_demo.default_corpus import default_corpus_path
from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.pairing_config import PairingConfig

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CPU_ONLY = {"jax": {"JAX_PLATFORMS": "cpu"}, "tensorflow": {"CUDA_VISIBLE_DEVICES": "-1"}}


def write_batches(path, minilm_dir, steps=3):
    tokenizer = BertTokenizer.from_preset(minilm_dir)
    dataset = pretraining_dataset(
        default_corpus_path(),
        tokenizer,
        PairingConfig(sequence_length=128),
        batching=BatchingConfig(batch_size=16),
        seed=3,
    )
    arrays = {"steps": steps}
    for step, (x, y, w) in enumerate(dataset.take(steps).as_numpy_iterator()):
        arrays.update({f"{step}_{k}": v for k, v in x.items()})
        arrays.update({f"{step}_mask_ids": y["mlm"], f"{step}_nsp": y["nsp"], f"{step}_mask_weights": w["mlm"]})
    np.savez(path, **arrays)


def train(tmp_path, name, environment):
    out = tmp_path / f"{name}.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.gpu.training_steps",
            str(tmp_path / "initial.weights.h5"),
            str(tmp_path / "batches.npz"),
            str(out),
        ],
        check=True,
        cwd=REPO,
        env=dict(os.environ, **environment),
    )
    with open(out, encoding="utf-8") as f:
        return json.load(f)


def test_training_steps_lose_the_same_on_gpu_and_cpu(tmp_path, minilm_dir):
    write_batches(tmp_path / "batches.npz", minilm_dir)
    cpu = train(tmp_path, "cpu", CPU_ONLY[keras.backend.backend()])
    gpu = train(tmp_path, "gpu", {})
    assert (cpu["device"], gpu["device"]) == ("cpu", "gpu")
    relative = np.abs(np.array(gpu["losses"]) - cpu["losses"]) / np.array(cpu["losses"])
    print(f"losses: CPU {cpu['losses']}, GPU {gpu['losses']}; largest relative difference {relative.max():.1e}")
    assert relative.max() < 1e-3
    assert cpu["losses"][-1] < cpu["losses"][0]  # The steps did train.
