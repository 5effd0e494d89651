"""`BertMaskedLMHead`: Hugging Face's `cls.predictions` (transform, LayerNorm,
tied vocabulary projection, bias), computed at the masked positions only."""

import keras
import numpy as np

from tests.layers.conftest import torch_tensor
from tests.reference import import_reference


def test_head_equals_hugging_face_at_the_masked_positions(hf_and_ours):
    torch = import_reference("torch")
    model, _, head = hf_and_ours
    rng = np.random.default_rng(0)
    sequence_output = rng.normal(size=(2, 9, model.config.hidden_size)).astype("float32")
    mask_positions = np.array([[1, 4, 8], [0, 0, 3]], "int32")  # Repeated positions too (padding slots).
    ours = keras.ops.convert_to_numpy(head(sequence_output, mask_positions))
    with torch.no_grad():
        theirs = model.cls.predictions(torch_tensor(sequence_output)).numpy()  # Every position.
    assert ours.shape == (2, 3, model.config.vocab_size)
    np.testing.assert_allclose(ours, np.take_along_axis(theirs, mask_positions[:, :, None], axis=1), atol=1e-5, rtol=0)


def test_the_output_projection_is_the_token_embedding(hf_and_ours):
    """Tied, as in BERT: a change of the token embedding changes the logits."""
    _, backbone, head = hf_and_ours
    embedding = backbone.embeddings.token_embedding
    hidden = np.ones((1, 2, embedding.output_dim), "float32")
    before = keras.ops.convert_to_numpy(head(hidden, np.array([[0, 1]])))
    original = keras.ops.convert_to_numpy(embedding.embeddings)
    try:
        embedding.embeddings.assign(original * 2)
        after = keras.ops.convert_to_numpy(head(hidden, np.array([[0, 1]])))
    finally:
        embedding.embeddings.assign(original)
    bias = keras.ops.convert_to_numpy(head.output_bias)
    np.testing.assert_allclose(after - bias, 2 * (before - bias), rtol=1e-5, atol=1e-5)
