"""The pretraining data pipeline gives the same batches under either Keras
backend, for the same seed and TensorFlow global seed (which orders
`tf.data`'s seeded shuffles: docs/pretraining_data.md): it is TensorFlow code
(`tf.data`, tf-text, the tokenizer traced in the dataset's graph) whatever
`KERAS_BACKEND` says. This is what lets the other
tests in tests/data (marked `backend_free`) run in one pass of
tests/run_all.sh only.

The backend is fixed per process, so the other backend reads the same corpus
in a subprocess."""

import os
import sys

import keras
import numpy as np
import pytest

from tests import warm_commands
from tests.data.conftest import collect

GLOBAL_SEED = 11
READ_BATCHES = f"""
import sys, keras, numpy as np
from keras_bert3.data import pretraining_dataset
from keras_bert3.tokenizers import BertTokenizer
from tests.data.conftest import collect
from keras_bert3.data import BatchingConfig
vocabulary, corpus, output = sys.argv[1:]
keras.utils.set_random_seed({GLOBAL_SEED})
dataset = pretraining_dataset(corpus, BertTokenizer.from_preset(vocabulary), batching=BatchingConfig(batch_size=32), seed=5)
np.savez(output, **collect(dataset.take(6)))
"""

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.both_backends
@pytest.mark.slow
def test_the_pipeline_gives_the_same_batches_under_either_backend(tmp_path, minilm_dir, tokenizer, corpus_path):
    from keras_bert3.data import BatchingConfig
    from keras_bert3.data import pretraining_dataset

    other = {"tensorflow": "jax", "jax": "tensorflow"}[keras.backend.backend()]
    warm_commands.run(
        [sys.executable, "-c", READ_BATCHES, minilm_dir, corpus_path, str(tmp_path / "other.npz")],
        check=True,
        env=dict(os.environ, KERAS_BACKEND=other),
        cwd=REPO,
    )
    theirs = np.load(tmp_path / "other.npz")
    keras.utils.set_random_seed(GLOBAL_SEED)
    ours = collect(pretraining_dataset(corpus_path, tokenizer, batching=BatchingConfig(batch_size=32), seed=5).take(6))
    assert sorted(ours) == sorted(theirs.files) and "mask_positions" in ours
    assert len(ours["token_ids"]) == 6 * 32
    for key in ours:
        np.testing.assert_array_equal(ours[key], theirs[key], err_msg=key)
