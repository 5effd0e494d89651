"""Static masks: shards hold exactly the dynamic pipeline's first dupe_factor passes."""

import numpy as np
import pytest

from keras_bert3.data import pretraining_dataset, read_pretraining_shards, write_pretraining_shards
from tests.data.conftest import collect
from tests.data.pretraining_bad_input_test import real_corpus
from keras_bert3.data.batching_config import BatchingConfig

pytestmark = pytest.mark.backend_free  # The pipeline is TensorFlow under either backend: one pass.


def rows(data) -> set:
    return {
        (r.tobytes(), s.tobytes(), p.tobytes(), m.tobytes(), int(n))
        for r, s, p, m, n in zip(
            data["token_ids"], data["segment_ids"], data["mask_positions"], data["y_mlm"], data["y_nsp"]
        )
    }


@pytest.mark.slow
def test_shards_equal_the_dynamic_passes(tokenizer, tmp_path):
    corpus = real_corpus(tmp_path / "corpus.txt", documents=40)
    paths = write_pretraining_shards(corpus, tokenizer, str(tmp_path / "shards"), dupe_factor=2, num_shards=3, seed=5)
    assert len(paths) == 3
    static = read_pretraining_shards(str(tmp_path / "shards" / "*.tfrecord"), batch_size=32)
    dynamic = pretraining_dataset(corpus, tokenizer, batching=BatchingConfig(batch_size=256), seed=5)
    per_32 = pretraining_dataset(corpus, tokenizer, batching=BatchingConfig(batch_size=32))
    assert static.element_spec == per_32.element_spec
    # Untuned (data/without_autotune.py): deleting a tuned iterator waited for
    # tf.data's optimization thread, up to 45 s in a `fit` on the test machine.
    assert static.options().autotune.enabled is False and dynamic.options().autotune.enabled is False
    from_shards, from_passes = collect(static), collect(dynamic, passes=2)
    assert rows(from_shards) == rows(from_passes)
    assert len(from_shards["token_ids"]) == len(from_passes["token_ids"])
    np.testing.assert_array_equal(from_shards["padding_mask"].sum(), from_passes["padding_mask"].sum())
    np.testing.assert_allclose(from_shards["mask_weights"].sum(), from_passes["mask_weights"].sum())


def test_the_old_module_of_without_autotune_still_works_with_a_warning():
    import importlib
    import sys

    from keras_bert3.data.without_autotune import without_autotune

    sys.modules.pop("keras_bert3.preprocessing.without_autotune", None)
    with pytest.warns(DeprecationWarning, match="use keras_bert3.data.without_autotune"):
        old = importlib.import_module("keras_bert3.preprocessing.without_autotune")
    assert old.without_autotune is without_autotune
