"""Exact resume of the data stream: the batches a resumed run reads from its
checkpoint's step on equal, in a fresh process, what an uninterrupted run reads
there (examples and masks), for streaming text and for prepared shards."""

import os
import subprocess
import sys

import numpy as np
import pytest

from keras_bert3.data.pairing_config import PairingConfig
from tests import warm_commands

pytestmark = pytest.mark.backend_free  # The stream is the data pipeline's: TensorFlow under either backend.

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
READ = """
import sys, keras, numpy as np
from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
from keras_bert3.data import MaskingConfig, PairingConfig
from keras_bert3.training.pretraining_run import PretrainingConfig, training_stream
corpus, tokenizer_dir, start, count, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
config = PretrainingConfig(
    output="unused",
    corpus=corpus,
    pairing=PairingConfig(sequence_length=64),
    masking=MaskingConfig(max_predictions_per_seq=10),
    seed=5,
)
keras.utils.set_random_seed(config.seed)  # As pretrain() does.
batches = list(training_stream(config, BertTokenizer.from_preset(tokenizer_dir), corpus, 8, start_step=start).take(count))
np.savez(out, **{f"{i}_{k}": v for i, (x, y, w) in enumerate(batches) for k, v in {**x, **y, **w}.items()})
"""


def read_batches(tmp_path, corpus, tokenizer_dir, runs):
    """Each (start, count) read in its own fresh process, all at once."""
    processes = []
    for start, count in runs:
        out = str(tmp_path / f"from{start}.npz")
        processes.append(
            (
                out,
                warm_commands.Popen(
                    [sys.executable, "-c", READ, corpus, tokenizer_dir, str(start), str(count), out],
                    cwd=REPO,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                ),
            )
        )
    results = []
    for out, process in processes:
        _, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stderr.decode()[-3000:]
        with np.load(out) as data:
            results.append({key: data[key] for key in data.files})
    return results


@pytest.mark.slow
@pytest.mark.parametrize("data", ["text", "shards"])
def test_resumed_stream_equals_the_uninterrupted_one(tmp_path, minilm_dir, data):
    from keras_bert3_demo.default_corpus import default_corpus_documents

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n\n".join("\n".join(d) for d in default_corpus_documents()[:20]) + "\n", encoding="utf-8")
    corpus = str(corpus)
    if data == "shards":
        from keras_bert3.data.paired_shards import prepare_pretraining_data
        from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer

        prepared = str(tmp_path / "prepared")
        prepare_pretraining_data(
            corpus,
            BertTokenizer.from_preset(minilm_dir),
            prepared,
            PairingConfig(sequence_length=64),
            num_shards=4,
            verbose=False,
        )
        corpus = prepared
    # The stream runs past the end of a pass (30 batches of 8 here, shards a few less): step 45 is in the second pass.
    uninterrupted, resumed = read_batches(tmp_path, corpus, minilm_dir, [(0, 48), (45, 3)])
    for key, value in resumed.items():
        step, name = key.split("_", 1)
        np.testing.assert_array_equal(value, uninterrupted[f"{int(step) + 45}_{name}"])
    assert not np.array_equal(uninterrupted["44_token_ids"], resumed["0_token_ids"])
