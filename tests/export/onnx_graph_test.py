"""The encoder written as ONNX ops (`export/onnx_graph.py`) computes what the
Keras layers compute: every activation it writes, on values where they
differ, and a real checkpoint (MiniLM) through both exported graphs."""

import keras
import numpy as np
import onnx
import pytest

from keras_bert3.export.onnx_export import OnnxTextModel
from keras_bert3.export.onnx_export import onnx_session
from keras_bert3.export.onnx_graph import task_graph
from keras_bert3.layers.activations import ACTIVATION_NAMES
from keras_bert3.models.bert_classifier import BertClassifier
from keras_bert3.preprocessing.bert_text_preprocessor import INPUT_NAMES
from tests.real_text import real_lines
from tests.test_case import tiny_backbone

pytestmark = [pytest.mark.backend_free, pytest.mark.cpu_numerics]  # ONNX graphs from numpy weights.


def onnx_logits(model: onnx.ModelProto, path, model_inputs: dict) -> np.ndarray:
    onnx.save(model, str(path))
    return onnx_session(str(path)).run(["logits"], model_inputs)[0]


def test_every_activation_gives_the_layers_values(tokenizer, tmp_path):
    """Every kernel scaled by 50 (random ones are too small for the choice to
    show in the logits), so that the values reach where the activations
    differ, the two GELUs too: checked."""
    texts = list(real_lines()[:16])
    logits = {}
    for activation in ACTIVATION_NAMES:
        classifier = BertClassifier(
            tiny_backbone(tokenizer.vocabulary_size(), activation=activation),
            3,
            tokenizer=tokenizer,
            sequence_length=64,
            dropout=0.0,
        )
        for variable in classifier.weights:
            if variable.path.endswith("kernel"):
                variable.assign(keras.ops.convert_to_numpy(variable) * 50.0)
        model_inputs = {k: np.asarray(v) for k, v in classifier.preprocessor(texts).items() if k in INPUT_NAMES}
        expected = keras.ops.convert_to_numpy(classifier(model_inputs, training=False))
        logits[activation] = onnx_logits(task_graph(classifier), tmp_path / f"{activation}.onnx", model_inputs)
        np.testing.assert_allclose(logits[activation], expected, atol=1e-4, rtol=0, err_msg=activation)
    gap = np.abs(logits["gelu"] - logits["gelu_approximate"]).max()
    assert gap > 1e-3, gap  # The inputs tell the two GELUs apart (by 0.003), well past the tolerance.


@pytest.mark.slow
def test_minilm_through_both_graphs_gives_predicts_values(minilm_dir, tmp_path):
    """all-MiniLM-L6-v2 with a new 4-class head: model.onnx on token ids and
    text_model.onnx on strings, within 1e-4 of `predict`."""
    keras.utils.set_random_seed(0)
    classifier = BertClassifier.from_preset(minilm_dir, num_classes=4, sequence_length=128)
    classifier.export(str(tmp_path / "onnx"), format="onnx")
    texts = list(real_lines()[:: len(real_lines()) // 40]) + ["", "Café naïve — 東京 🙂", "word " * 200]
    expected = classifier.predict(texts, verbose=0)
    assert expected.std() > 0.01  # A real spread of logits.
    served = OnnxTextModel(str(tmp_path / "onnx"))
    np.testing.assert_allclose(served(texts)["logits"], expected, atol=1e-4, rtol=0)
    model_inputs = served.model_inputs(texts)
    session = onnx_session(str(tmp_path / "onnx" / "model.onnx"))
    np.testing.assert_allclose(session.run(["logits"], model_inputs)[0], expected, atol=1e-4, rtol=0)
