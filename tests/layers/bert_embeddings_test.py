"""`BertEmbeddings`: token + segment + position embeddings, LayerNorm, equal
to Hugging Face's `BertEmbeddings` on the same weights."""

import keras
import numpy as np
import pytest

from tests.layers.conftest import padded_batch
from tests.layers.conftest import torch_tensor
from tests.reference import import_reference


@pytest.mark.parametrize("training", [False, True])
def test_embeddings_equal_hugging_face(hf_and_ours, training):
    torch = import_reference("torch")
    model, backbone, _ = hf_and_ours
    batch = padded_batch()
    ours = backbone.embeddings(batch["token_ids"], batch["segment_ids"], training=training)  # Dropout 0.
    with torch.no_grad():
        theirs = model.bert.embeddings(
            input_ids=torch_tensor(batch["token_ids"], torch.long),
            token_type_ids=torch_tensor(batch["segment_ids"], torch.long),
        )
    np.testing.assert_allclose(keras.ops.convert_to_numpy(ours), theirs.numpy(), atol=1e-5, rtol=0)


def test_positions_beyond_the_table_are_refused(hf_and_ours):
    _, backbone, _ = hf_and_ours
    positions = backbone.embeddings.max_sequence_length
    too_long = np.ones((1, positions + 1), "int32")
    with pytest.raises(
        ValueError, match=f"has {positions + 1} tokens per sequence but this model has only {positions} positions"
    ):
        backbone.embeddings(too_long, np.zeros_like(too_long))
