"""Token ids past the model's embedding are refused before training, on both
backends: a tokenizer larger than the backbone's vocabulary (a preset put
together from two models, a task), and batches made with a larger vocabulary
(the README's pretraining snippet with a real 30,522-token tokenizer and
`vocabulary_size=8000`, which JAX trained to NaN)."""

import os
import re
import sys

import pytest
import tensorflow as tf

from keras_bert3.data.pretraining_dataset import pretraining_dataset
from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.bert_classifier import BertClassifier
from keras_bert3.models.bert_pretrainer import BertPretrainer
from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
from keras_bert3_demo.default_corpus import default_corpus_documents
from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.masking_config import MaskingConfig
from keras_bert3.data.pairing_config import PairingConfig
from tests import warm_commands

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text("\n\n".join("\n".join(d) for d in default_corpus_documents()[:100]) + "\n", encoding="utf-8")
    return str(path)


@pytest.mark.slow
def test_batches_of_a_larger_vocabulary_end_fit_before_they_are_trained_on(tokenizer, corpus):
    data = pretraining_dataset(
        corpus,
        tokenizer,
        PairingConfig(sequence_length=64),
        MaskingConfig(max_predictions_per_seq=10),
        BatchingConfig(batch_size=8),
    ).repeat()
    for call in ("fit", "evaluate"):
        # A new model each time: on JAX, Keras leaves a model whose `fit` failed at its first batch without
        # its variables' values (it takes them out of the variables before it reads the batch).
        pretrainer = BertPretrainer(BertBackbone.from_size("tiny", vocabulary_size=8000))
        pretrainer.compile(learning_rate=1e-3, total_steps=100)
        with pytest.raises(
            tf.errors.InvalidArgumentError,
            match=r"A batch holds token id (\d+) but the token embedding of the model has 8,000 rows",
        ) as error:
            if call == "fit":
                pretrainer.fit(data, steps_per_epoch=2, epochs=1, verbose=0)
            else:
                pretrainer.evaluate(data, steps=1, verbose=0)
        largest = int(re.search(r"token id (\d+)", error.value.message).group(1))
        assert 8000 <= largest < 30522  # MiniLM's tokenizer gives ids past 8,000 in the first batch of each pass.


@pytest.mark.backend_free
def test_a_task_on_a_tokenizer_larger_than_its_backbone_is_refused(tokenizer):
    with pytest.raises(
        ValueError, match="The tokenizer has 30,522 tokens but the backbone's token embedding has 8,000 rows"
    ):
        BertClassifier(BertBackbone.from_size("tiny", vocabulary_size=8000), 2, tokenizer=tokenizer)


@pytest.mark.both_backends
@pytest.mark.parametrize("backend", ["tensorflow", "jax"])
@pytest.mark.slow
def test_pretraining_a_preset_whose_tokenizer_outgrows_its_backbone_is_refused_before_training(
    tmp_path, minilm_dir, corpus, backend
):
    preset = str(tmp_path / "preset")
    BertBackbone.from_size("tiny", vocabulary_size=8000).save_to_preset(preset)
    BertTokenizer.from_preset(minilm_dir).save_to_preset(preset)
    output = tmp_path / "run"
    result = warm_commands.run(
        [
            sys.executable,
            "-m",
            "keras_bert3",
            "pretrain",
            "--preset",
            preset,
            "--corpus",
            corpus,
            "--output",
            str(output),
            "--steps",
            "10",
            "--batch-size",
            "8",
            "--sequence-length",
            "64",
            "--max-predictions-per-seq",
            "10",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=dict(os.environ, KERAS_BACKEND=backend),
    )
    errors = [line for line in result.stderr.splitlines() if line.startswith("keras-bert3 pretrain: ")]
    assert result.returncode == 2 and errors == [
        "keras-bert3 pretrain: The tokenizer has 30,522 tokens but the backbone's token embedding has 8,000 rows "
        "(its vocabulary_size): they come from different models. Load both from the same preset, or build the "
        "backbone with vocabulary_size=tokenizer.vocabulary_size(). (--debug shows where)"
    ], result.stderr[-3000:]
    assert not os.path.exists(output / "backup") and not os.path.exists(output / "history.csv")  # Nothing trained.
