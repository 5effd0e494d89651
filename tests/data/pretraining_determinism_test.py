"""Same seed, same examples; different seeds, different masks; new masks on each pass."""

import numpy as np
import pytest

from keras_bert3.data import pretraining_dataset
from tests.data.conftest import collect
from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.pairing_config import PairingConfig

pytestmark = pytest.mark.backend_free  # The pipeline is TensorFlow under either backend: one pass.


def first_batches(dataset, count: int = 3) -> list:
    return [x["token_ids"] for x, _, _ in dataset.take(count).as_numpy_iterator()]


@pytest.mark.slow
def test_same_seed_same_examples(tokenizer, corpus_path):
    one = collect(pretraining_dataset(corpus_path, tokenizer, batching=BatchingConfig(batch_size=64), seed=3).take(5))
    two = collect(pretraining_dataset(corpus_path, tokenizer, batching=BatchingConfig(batch_size=64), seed=3).take(5))
    for key in one:
        np.testing.assert_array_equal(one[key], two[key])


@pytest.mark.slow
def test_different_seeds_different_masks(tokenizer, corpus_path):
    one = collect(pretraining_dataset(corpus_path, tokenizer, batching=BatchingConfig(batch_size=64), seed=3).take(2))
    two = collect(pretraining_dataset(corpus_path, tokenizer, batching=BatchingConfig(batch_size=64), seed=4).take(2))
    assert not np.array_equal(one["mask_positions"], two["mask_positions"])


@pytest.mark.slow
def test_each_pass_has_new_masks(tokenizer, corpus_path):
    dataset = pretraining_dataset(
        corpus_path,
        tokenizer,
        PairingConfig(next_sentence_prediction=False),
        batching=BatchingConfig(batch_size=64),
        seed=3,
    )
    first, second = first_batches(dataset), first_batches(dataset)
    assert not all(np.array_equal(a, b) for a, b in zip(first, second))
    # A new dataset with the same seed replays the same sequence of passes.
    again = pretraining_dataset(
        corpus_path,
        tokenizer,
        PairingConfig(next_sentence_prediction=False),
        batching=BatchingConfig(batch_size=64),
        seed=3,
    )
    for a, b in zip(first + second, first_batches(again) + first_batches(again)):
        np.testing.assert_array_equal(a, b)


def test_same_examples_new_masks_from_the_masker(tokenizer):
    """The masker alone: one batch, two seeds, two mask sets; the same seed, the same masks."""
    from keras_bert3.data import MlmMasker

    model_inputs = tokenizer.join_segments(["The quick brown fox jumps over the lazy dog."] * 8, sequence_length=32)
    masker = MlmMasker(tokenizer, max_predictions_per_seq=5)
    one = masker(model_inputs["token_ids"], model_inputs["padding_mask"], seed=[1, 2])
    two = masker(model_inputs["token_ids"], model_inputs["padding_mask"], seed=[1, 3])
    again = masker(model_inputs["token_ids"], model_inputs["padding_mask"], seed=[1, 2])
    assert not np.array_equal(one["mask_positions"], two["mask_positions"])
    for key in one:
        np.testing.assert_array_equal(one[key], again[key])


def test_pipelines_built_again_reuse_the_traced_pairing_and_a_deleted_tokenizer_is_let_go(minilm_dir, corpus_path):
    """Each pipeline built after the first with the same tokenizer and settings (a run's one-batch check, then its
    training pass) calls the pairing and block functions traced for the first, and makes the same batches; the
    traced functions do not keep a tokenizer that is gone."""
    import gc
    import weakref

    from keras_bert3.data import corpus_reader
    from keras_bert3.data import paired_examples
    from keras_bert3.data.document_group_pairer import DocumentGroupPairer
    from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer

    tokenizer = BertTokenizer.from_preset(minilm_dir)  # This test's own: its entry must go with it.
    pairing = PairingConfig(sequence_length=64)
    batching = BatchingConfig(batch_size=16, shuffle_buffer=64)
    batches = [collect(pretraining_dataset(corpus_path, tokenizer, pairing, batching=batching, seed=7).take(2))]
    pairing_function = paired_examples.pairing_function(
        tokenizer, DocumentGroupPairer.for_tokenizer(tokenizer, **pairing.pairer_settings())
    )
    assert pairing_function.experimental_get_tracing_count() == 1
    batches.append(collect(pretraining_dataset(corpus_path, tokenizer, pairing, batching=batching, seed=7).take(2)))
    assert pairing_function.experimental_get_tracing_count() == 1
    assert corpus_reader._block_documents.experimental_get_tracing_count() == 1
    for key in batches[0]:
        np.testing.assert_array_equal(batches[0][key], batches[1][key])

    held = weakref.ref(tokenizer)
    del tokenizer, pairing_function
    gc.collect()
    assert held() is None
