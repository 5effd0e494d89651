"""SavedModels that take strings, checked in the serving runtime: a Python
process that loads each export from disk and imports only tensorflow and tensorflow_text (no keras, no keras_bert3), on the
backend the suite runs on (TensorFlow directly, JAX through jax2tf)."""

import keras
import numpy as np
import pytest

from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.bert_classifier import BertClassifier
from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
from keras_bert3_demo.docstring_topics import docstring_topics
from tests.saved_model_client import assert_serving_ops
from tests.saved_model_client import assert_warmup_served
from tests.saved_model_client import call_in_serving_runtime

BAD_TEXTS = [b"", b"   \t\n ", b"word " * 20000, b"\xff\xfe\xc3(caf\xc3\xa9 \xed\xa0\x80"]


def serve_in_serving_runtime(export_dir, tmp_path, texts, model_inputs, pairs=None, warmup=True) -> dict:
    """Texts (and bad input) to serving_default, the model inputs to serve_token_ids;
    checks the export's ops, returns the outputs and serving_default's input dtypes."""
    inputs, bad_inputs = {"text": texts}, {"text": BAD_TEXTS}
    no_strings = {"text": np.array([], dtype=bytes)}
    wrong_dtype = {"text": np.array([1, 2], np.int32)}
    if pairs is not None:
        inputs["text_pair"], bad_inputs["text_pair"] = pairs, BAD_TEXTS[::-1]
        no_strings["text_pair"] = no_strings["text"]
        wrong_dtype["text_pair"] = np.array([b"a", b"b"])
    calls = {
        "texts": ("serving_default", inputs),
        "bad": ("serving_default", bad_inputs),
        "empty_batch": ("serving_default", no_strings),
        "refused_dtype": ("serving_default", wrong_dtype),
        "ids": ("serve_token_ids", {k: np.asarray(v) for k, v in model_inputs.items()}),
    }
    if pairs is not None:  # A request without the second text.
        calls["refused_missing"] = ("serving_default", {"text": texts})
    served = call_in_serving_runtime(export_dir, tmp_path, calls)
    assert_serving_ops(served)  # TensorFlow core and tf-text ops only.
    requests = assert_warmup_served(served, export_dir) if warmup else []
    # Bad requests, in the serving runtime: an empty batch answers with no rows; a wrong dtype or a
    # missing input is refused with an error naming it, and the process goes on.
    assert served["empty_batch"]["probabilities"].shape[0] == 0
    assert b"int32" in served["refused_dtype"]["error"][0] and b"string" in served["refused_dtype"]["error"][0]
    if pairs is not None:
        assert b"text_pair" in served["refused_missing"]["error"][0]
    return {
        "logits": served["texts"]["logits"],
        "probabilities": served["texts"]["probabilities"],
        "bad_probabilities": served["bad"]["probabilities"],
        "id_logits": served["ids"]["logits"],
        "inputs": served.signatures["serving_default"]["inputs"],
        "warmup": list(zip(requests, served.warmup)),
    }


@pytest.fixture(scope="module")
def texts():
    data = docstring_topics()
    return data["test_texts"][:12]


def check_export(classifier, tmp_path, texts, pairs=None, atol=1e-5, warmup=True, jit_compile=False):
    """`warmup=False`: an export without warm-up records (on JAX each
    record's shape compiles in the server, about 1 s each for MiniLM; the
    records are replayed for the tiny float32 exports of both backends)."""
    x = texts if pairs is None else (texts, pairs)
    expected = np.asarray(classifier.predict(x, batch_size=5, verbose=0), "float32")
    model_inputs = classifier.preprocessor(x)
    export_dir = tmp_path / "export"
    classifier.export(str(export_dir), warmup=warmup, jit_compile=jit_compile)
    served = serve_in_serving_runtime(export_dir, tmp_path, texts, model_inputs, pairs, warmup)
    assert served["inputs"] == (
        {"text": "DT_STRING"} if pairs is None else {"text": "DT_STRING", "text_pair": "DT_STRING"}
    )
    np.testing.assert_allclose(served["logits"], expected, atol=atol)
    np.testing.assert_allclose(
        served["probabilities"], keras.ops.convert_to_numpy(keras.ops.softmax(expected)), atol=atol
    )
    np.testing.assert_allclose(served["id_logits"], expected, atol=atol)
    assert served["bad_probabilities"].shape == (4, classifier.num_classes)
    assert np.isfinite(served["bad_probabilities"]).all()
    np.testing.assert_allclose(served["bad_probabilities"].sum(-1), 1.0, atol=1e-5)
    if not warmup:
        return served
    # The last text warm-up request holds all its texts, shortest to overlong: the server's logits are predict's.
    (signature, inputs), outputs = [request for request in served["warmup"] if request[0][0] == "serving_default"][-1]
    warm = [text.decode("utf-8") for text in inputs["text"]]
    warm_x = warm if pairs is None else (warm, [text.decode("utf-8") for text in inputs["text_pair"]])
    np.testing.assert_allclose(outputs["logits"], classifier.predict(warm_x, verbose=0), atol=atol)
    return served


def tiny_classifier(minilm_dir, dtype=None, **kwargs):
    keras.utils.set_random_seed(1)
    tokenizer = BertTokenizer.from_preset(minilm_dir)
    backbone = BertBackbone(
        vocabulary_size=tokenizer.vocabulary_size(),
        num_layers=2,
        num_heads=2,
        hidden_dim=8,
        intermediate_dim=16,
        max_sequence_length=64,
        dtype=dtype,
    )
    return BertClassifier(backbone, 3, tokenizer=tokenizer, sequence_length=64, dtype=dtype, **kwargs)


@pytest.mark.slow
def test_tiny_export_serves_strings_like_predict(minilm_dir, tmp_path, texts):
    check_export(tiny_classifier(minilm_dir), tmp_path, texts)


@pytest.mark.slow
def test_tiny_pair_export_takes_two_strings(minilm_dir, tmp_path, texts):
    check_export(tiny_classifier(minilm_dir, sentence_pairs=True), tmp_path, texts, pairs=texts[::-1])


def xla_compiled_functions(export_dir) -> list[str]:
    """The functions of a SavedModel that TensorFlow must compile with XLA."""
    from tensorflow.core.protobuf import saved_model_pb2

    saved_model = saved_model_pb2.SavedModel.FromString((export_dir / "saved_model.pb").read_bytes())
    library = saved_model.meta_graphs[0].graph_def.library
    return [f.signature.name for f in library.function if f.attr["_XlaMustCompile"].b]


@pytest.mark.slow
def test_xla_export_serves_like_predict(minilm_dir, tmp_path, texts):
    """`export(jit_compile=True)` on TensorFlow: the model's function is marked
    for XLA, and it serves strings, ids, bad input and its warm-up records in
    TF Serving's runtime like `predict`."""
    if keras.backend.backend() == "jax":
        pytest.skip("A JAX export is XLA either way: test_tiny_export_serves_strings_like_predict serves one.")
    check_export(tiny_classifier(minilm_dir), tmp_path, texts, jit_compile=True)
    assert xla_compiled_functions(tmp_path / "export")


@pytest.mark.slow
def test_default_export_needs_no_xla(minilm_dir, tmp_path):
    """The default export has no function that must be compiled by XLA: TF
    Serving runs it without `--xla_cpu_compilation_enabled`. Without warm-up
    records, it has no `assets.extra` folder."""
    export_dir = tmp_path / "export"
    classifier = tiny_classifier(minilm_dir)
    classifier.export(str(export_dir), warmup=False)
    assert xla_compiled_functions(export_dir) == []
    assert (export_dir / "saved_model.pb").is_file()
    assert not (export_dir / "assets.extra").exists()
    # Its name before 2026-11-27 writes the same files, with a warning.
    with pytest.warns(DeprecationWarning, match=r"BertClassifier.write_saved_model is deprecated .* use export\("):
        classifier.write_saved_model(str(tmp_path / "old"), warmup=False)
    assert sorted(p.relative_to(tmp_path / "old") for p in (tmp_path / "old").rglob("*")) == sorted(
        p.relative_to(export_dir) for p in export_dir.rglob("*")
    )


@pytest.mark.slow
def test_minilm_export_serves_strings_like_predict(minilm_dir, tmp_path, texts):
    classifier = BertClassifier.from_preset(minilm_dir, num_classes=6)
    served = check_export(classifier, tmp_path, texts, warmup=False)
    assert served["logits"].std() > 0  # Real, non-constant outputs.


@pytest.mark.cpu_numerics
@pytest.mark.slow
def test_mixed_bfloat16_export_serves_like_predict(minilm_dir, tmp_path, texts):
    """bfloat16 compute with float32 weights exports and serves like its own predict."""
    classifier = tiny_classifier(minilm_dir, dtype="mixed_bfloat16")
    assert classifier.backbone.dtype_policy.name == "mixed_bfloat16"
    expected = np.asarray(classifier.predict(texts, verbose=0), "float32")
    # Served and predicted batches are padded differently (and the SavedModel's
    # graph fuses ops): bfloat16 rounding (8 bits) differs, not the model.
    check_export(classifier, tmp_path, texts, atol=0.02 * np.abs(expected).max(), warmup=False)


@pytest.mark.cpu_numerics
@pytest.mark.slow
def test_bfloat16_export_serves_near_float32(minilm_dir, tmp_path, texts):
    """The export docs/serving.md recommends on CPUs with AMX (and AMD's with AVX512-BF16):
    MiniLM built with dtype="bfloat16", served in TF Serving's runtime, gives
    probabilities within 1e-2 of the float32 model's predict. Its weights are
    bfloat16 in the export too (half the size, no per-call cast of float32 weights)."""
    import tensorflow as tf

    keras.utils.set_random_seed(0)
    float32 = BertClassifier.from_preset(minilm_dir, num_classes=6)
    bfloat16 = BertClassifier.from_preset(minilm_dir, num_classes=6, dtype="bfloat16")
    bfloat16.set_weights(float32.get_weights())  # The same new head (seeds alone give JAX another one).
    assert {weight.dtype for weight in bfloat16.weights if "float" in weight.dtype} == {"bfloat16"}
    reference = np.asarray(float32.predict(texts, verbose=0), "float32")
    served = check_export(bfloat16, tmp_path, texts, atol=0.02 * np.abs(reference).max(), warmup=False)
    np.testing.assert_allclose(
        served["probabilities"], keras.ops.convert_to_numpy(keras.ops.softmax(reference)), atol=1e-2
    )
    spread = reference.max() - reference.min()
    # Within 0.05 of the logits' spread: the largest error was 0.007 of it with oneDNN's bfloat16 products
    # (AVX-512 and AMX CPUs), 0.015 with TensorFlow's own (AVX2 CPUs). The argmax is not compared: the new
    # head is random, and a quarter of the rows have their top two logits within 0.005 of the spread.
    np.testing.assert_allclose(served["logits"], reference, atol=0.05 * spread)
    weights = tf.train.load_checkpoint(str(tmp_path / "export" / "variables" / "variables"))
    float_dtypes = {
        dtype
        for name, dtype in weights.get_variable_to_dtype_map().items()
        if dtype.is_floating and "OPTIMIZER" not in name
    }
    assert float_dtypes == {tf.bfloat16}
