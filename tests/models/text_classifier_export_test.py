"""SavedModels that take strings, checked in a fresh Python process that
imports only tensorflow and tensorflow_text (no keras, no keras_bert3), on the
backend the suite runs on (TensorFlow directly, JAX through jax2tf)."""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest

from keras_bert3.data.docstring_topics import docstring_topics
from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.bert_classifier import BertClassifier
from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer

# Runs in a fresh process: loads the SavedModel with TF and tf-text only, feeds
# the texts (and bad input) to serving_default, and the packed ids to
# serve_token_ids; writes the outputs next to the request.
SERVING_CLIENT = r"""
import json, sys
import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the tf-text ops)

# (`import tensorflow` itself may pull in keras and jax; our code must not be needed.)
assert not any(m.startswith("keras_bert3") for m in sys.modules)
export_dir, request_path, out_path = sys.argv[1:]
request = json.load(open(request_path))
model = tf.saved_model.load(export_dir)
serve = model.signatures["serving_default"]
inputs = {"text": tf.constant(request["text"])}
if "text_pair" in request:
    inputs["text_pair"] = tf.constant(request["text_pair"])
outputs = serve(**inputs)
bad = [b"", b"   \t\n ", b"word " * 20000, b"\xff\xfe\xc3(caf\xc3\xa9 \xed\xa0\x80"]
bad_inputs = {"text": tf.constant(bad)}
if "text_pair" in request:
    bad_inputs["text_pair"] = tf.constant(bad[::-1])
bad_outputs = serve(**bad_inputs)
ids = {k: tf.constant(np.array(v, np.int32)) for k, v in request["packed"].items()}
id_outputs = model.signatures["serve_token_ids"](**ids)
np.savez(out_path, logits=outputs["logits"].numpy(), probabilities=outputs["probabilities"].numpy(),
         bad_probabilities=bad_outputs["probabilities"].numpy(), id_logits=id_outputs["logits"].numpy())
"""


def serve_in_fresh_process(export_dir, tmp_path, texts, packed, pairs=None) -> dict:
    request = {"text": texts, "packed": {k: np.asarray(v).tolist() for k, v in packed.items()}}
    if pairs is not None:
        request["text_pair"] = pairs
    request_path, out_path = tmp_path / "request.json", tmp_path / "outputs.npz"
    request_path.write_text(json.dumps(request))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("KERAS_BACKEND", None)
    client = subprocess.run([sys.executable, "-c", SERVING_CLIENT, str(export_dir), str(request_path), str(out_path)],
                            env=env, capture_output=True, text=True)  # fmt: skip
    assert client.returncode == 0, client.stderr[-3000:]
    return dict(np.load(out_path))


def signatures_listed(export_dir) -> str:
    shown = subprocess.run(
        ["saved_model_cli", "show", "--all", "--dir", str(export_dir)],
        capture_output=True, text=True, check=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
    ).stdout  # fmt: skip
    assert "signature_def['serving_default']" in shown
    assert "signature_def['serve_token_ids']" in shown
    return shown


@pytest.fixture(scope="module")
def texts():
    data = docstring_topics()
    return data["test_texts"][:12]


def check_export(classifier, tmp_path, texts, pairs=None):
    x = texts if pairs is None else (texts, pairs)
    expected = classifier.predict(x, batch_size=5, verbose=0)
    packed = classifier.preprocessor(x)
    export_dir = tmp_path / "export"
    classifier.export(str(export_dir))
    shown = signatures_listed(export_dir)
    assert "inputs['text'] tensor_info:\n        dtype: DT_STRING" in shown
    assert ("inputs['text_pair']" in shown) == (pairs is not None)
    served = serve_in_fresh_process(export_dir, tmp_path, texts, packed, pairs)
    np.testing.assert_allclose(served["logits"], expected, atol=1e-5)
    np.testing.assert_allclose(served["probabilities"], keras.ops.convert_to_numpy(keras.ops.softmax(expected)), atol=1e-5)
    np.testing.assert_allclose(served["id_logits"], expected, atol=1e-5)
    assert served["bad_probabilities"].shape == (4, classifier.num_classes)
    assert np.isfinite(served["bad_probabilities"]).all()
    np.testing.assert_allclose(served["bad_probabilities"].sum(-1), 1.0, atol=1e-5)
    return served


def tiny_classifier(minilm_dir, **kwargs):
    keras.utils.set_random_seed(1)
    tokenizer = BertTokenizer.from_preset(minilm_dir)
    backbone = BertBackbone(vocabulary_size=tokenizer.vocabulary_size(), num_layers=2, num_heads=2,
                            hidden_dim=8, intermediate_dim=16, max_sequence_length=64)  # fmt: skip
    return BertClassifier(backbone, 3, tokenizer=tokenizer, sequence_length=64, **kwargs)


def test_tiny_export_serves_strings_like_predict(minilm_dir, tmp_path, texts):
    check_export(tiny_classifier(minilm_dir), tmp_path, texts)


def test_tiny_pair_export_takes_two_strings(minilm_dir, tmp_path, texts):
    check_export(tiny_classifier(minilm_dir, sentence_pairs=True), tmp_path, texts, pairs=texts[::-1])


@pytest.mark.slow
def test_minilm_export_serves_strings_like_predict(minilm_dir, tmp_path, texts):
    classifier = BertClassifier.from_preset(minilm_dir, num_classes=6)
    served = check_export(classifier, tmp_path, texts)
    assert served["logits"].std() > 0  # Real, non-constant outputs.
