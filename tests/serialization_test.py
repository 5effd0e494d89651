"""Every class keras_bert3 registers with Keras survives serialization: models
saved to a `.keras` file and loaded back (compiled, so the optimizer, its
schedule and the metrics go through the file too) give the same outputs;
preprocessing layers, optimizers and the schedule rebuilt from their
serialized form behave the same. A registered class that no test here covers
fails `test_every_registered_class_is_covered`."""

import keras
import numpy as np
import pytest

from keras_bert3.layers.bert_embeddings import BertEmbeddings
from keras_bert3.layers.bert_encoder_block import BertEncoderBlock
from keras_bert3.layers.float32_accumulating_dense import Float32AccumulatingDense
from keras_bert3.layers.fast_mask_dropout import FastMaskDropout
from keras_bert3.layers.fused_layer_normalization import FusedLayerNormalization
from keras_bert3.models.bert_classifier import BertClassifier
from keras_bert3.models.bert_pretrainer import BertPretrainer
from keras_bert3.models.bert_question_answerer import BertQuestionAnswerer
from keras_bert3.models.bert_masked_lm import BertMaskedLM
from keras_bert3.models.bert_multi_label_classifier import BertMultiLabelClassifier
from keras_bert3.models.bert_multiple_choice import BertMultipleChoice
from keras_bert3.models.bert_regressor import BertRegressor
from keras_bert3.models.bert_token_classifier import BertTokenClassifier
from keras_bert3.optimizers.bert_adamw import BertAdamW
from keras_bert3.optimizers.bert_lamb import BertLamb
from keras_bert3.optimizers.linear_warmup_decay import LinearWarmupLinearDecay
from keras_bert3.preprocessing.bert_text_preprocessor import BertTextPreprocessor
from keras_bert3.preprocessing.bert_token_classifier_preprocessor import BertTokenClassifierPreprocessor
from keras_bert3.preprocessing.question_answering_preprocessor import QuestionAnsweringPreprocessor
from keras_bert3.tokenizers.bert_segment_joiner import BertSegmentJoiner
from tests.test_case import assert_keras_file_round_trip
from tests.test_case import assert_same_outputs
from tests.test_case import assert_serialization_round_trip
from tests.test_case import tiny_backbone

TEXTS = ["Return the value of the named attribute of object.", "A short text."]
SECOND_TEXTS = ["Open the URL and return the response.", ""]
WORDS = [["Guido", "van", "Rossum", "wrote", "Python"], ["A", "word"]]
QUESTIONS = ["What does it return?", "Who wrote it?"]
CONTEXTS = ["It returns the value of the named attribute of object.", "Python was written by Guido van Rossum."]

COVERED = {
    "BertEmbeddings": "test_layers_survive_a_keras_file",
    "BertEncoderBlock": "test_layers_survive_a_keras_file",
    "Float32AccumulatingDense": "test_layers_survive_a_keras_file",
    "FastMaskDropout": "test_layers_survive_a_keras_file",
    "FusedLayerNormalization": "test_layers_survive_a_keras_file",
    "BertMaskedLMHead": "test_models_survive_a_keras_file[pretrainer] (it is built on the backbone's token embedding)",
    "BertBackbone": "test_models_survive_a_keras_file[backbone]",
    "BertPretrainer": "test_models_survive_a_keras_file[pretrainer]",
    "BertClassifier": "test_models_survive_a_keras_file[pair_classifier]",
    "BertMultiLabelClassifier": "test_models_survive_a_keras_file[multi_label_classifier]",
    "BertMultipleChoice": "test_models_survive_a_keras_file[multiple_choice]",
    "BertMaskedLM": "test_models_survive_a_keras_file[masked_lm]",
    "MultipleChoicePreprocessor": "test_models_survive_a_keras_file[multiple_choice] (the model's preprocessor)",
    "ChoicesAsRows": "test_models_survive_a_keras_file[multiple_choice] (its layers)",
    "RowsAsChoices": "test_models_survive_a_keras_file[multiple_choice] (its layers)",
    "BertRegressor": "test_models_survive_a_keras_file[pair_regressor]",
    "BertTokenClassifier": "test_models_survive_a_keras_file[token_classifier]",
    "_LabelledTokenAccuracy": "test_models_survive_a_keras_file[token_classifier] (its compiled metric)",
    "BertQuestionAnswerer": "test_models_survive_a_keras_file[question_answerer]",
    "BertTokenizer": "test_preprocessing_layers_survive_serialization[tokenizer]",
    "BertSegmentJoiner": "test_preprocessing_layers_survive_serialization[segment_joiner]",
    "BertPacker": "tests/tokenizers/bert_segment_joiner_test.py (the old name of BertSegmentJoiner, still loaded)",
    "BertTextPreprocessor": "test_preprocessing_layers_survive_serialization[text_preprocessor]",
    "BertTokenClassifierPreprocessor": "test_preprocessing_layers_survive_serialization[token_classifier_preprocessor]",
    "QuestionAnsweringPreprocessor": "test_preprocessing_layers_survive_serialization[question_answering_preprocessor]",
    "BertAdamW": "test_optimizers_and_schedule_survive_serialization (and every compiled model above)",
    "BertLamb": "test_optimizers_and_schedule_survive_serialization",
    "LinearWarmupLinearDecay": "test_optimizers_and_schedule_survive_serialization",
    "SmoothedSparseCategoricalCrossentropy": "tests/models/label_smoothing_test.py (serialized and restored)",
}


@pytest.mark.backend_free
def test_every_registered_class_is_covered():
    import keras_bert3  # noqa: F401  (registers every class)

    registered = {
        name.split(">", 1)[1] for name in keras.saving.get_custom_objects() if name.startswith("keras_bert3>")
    }
    assert registered == set(COVERED), registered ^ set(COVERED)


def test_layers_survive_a_keras_file(tmp_path):
    token_ids = keras.Input((None,), dtype="int32")
    segment_ids = keras.Input((None,), dtype="int32")
    padding_mask = keras.Input((None,), dtype="int32")
    embedded = BertEmbeddings(50, 8, max_sequence_length=16)(token_ids, segment_ids)
    encoded = BertEncoderBlock(num_heads=2, intermediate_dim=16)(embedded, padding_mask)
    normalized = FusedLayerNormalization(epsilon=1e-6)(encoded)
    projected = Float32AccumulatingDense(4, activation="gelu")(FastMaskDropout(0.1, seed=3)(normalized))
    model = keras.Model([token_ids, segment_ids, padding_mask], projected)
    rng = np.random.default_rng(0)
    inputs = [rng.integers(0, 50, (2, 16)), rng.integers(0, 2, (2, 16)), (np.arange(16) < [[16], [9]]).astype("int32")]
    assert_keras_file_round_trip(model, tmp_path, lambda m: m.predict(inputs, verbose=0))


def build_model(kind: str, tokenizer):
    """A tiny compiled model of `kind`, and how to get its outputs."""
    backbone = tiny_backbone(tokenizer.vocabulary_size())
    model_inputs = {
        name: np.asarray(value) for name, value in BertTextPreprocessor(tokenizer, sequence_length=32)(TEXTS).items()
    }
    if kind == "backbone":
        return backbone, lambda m: m.predict(model_inputs, verbose=0)
    if kind == "pretrainer":
        model = BertPretrainer(backbone)
        model.compile(learning_rate=1e-3, total_steps=10, warmup_steps=1)
        inputs = {**model_inputs, "mask_positions": np.array([[1, 2], [3, 0]], "int32")}
        return model, lambda m: m.predict(inputs, verbose=0)
    if kind == "pair_classifier":
        model = BertClassifier(backbone, 3, tokenizer=tokenizer, sentence_pairs=True, sequence_length=32, dropout=0.2)
        model.compile(learning_rate=1e-3, total_steps=10)
        return model, lambda m: m.predict((TEXTS, SECOND_TEXTS), verbose=0)
    if kind == "multi_label_classifier":
        model = BertMultiLabelClassifier(backbone, 3, tokenizer=tokenizer, sequence_length=32, threshold=0.3)
        model.compile(learning_rate=1e-3, total_steps=10)
        return model, lambda m: m.predict(TEXTS, verbose=0)  # The threshold: in the config compared.
    if kind == "pair_regressor":
        model = BertRegressor(backbone, tokenizer=tokenizer, sentence_pairs=True, sequence_length=32, dropout=0.2)
        model.compile(learning_rate=1e-3, total_steps=10)
        return model, lambda m: m.predict((TEXTS, SECOND_TEXTS), verbose=0)
    if kind == "masked_lm":
        model = BertMaskedLM(backbone, tokenizer=tokenizer, sequence_length=32, top_k=3)
        model.compile(learning_rate=1e-3, total_steps=10)
        inputs = {
            k: v for k, v in model.mask_inputs(["A [MASK] text.", "[MASK] two [MASK]"]).items() if k != "mask_count"
        }
        return model, lambda m: m.predict(inputs, verbose=0)
    if kind == "multiple_choice":
        model = BertMultipleChoice(backbone, tokenizer=tokenizer, sequence_length=32)
        model.compile(learning_rate=1e-3, total_steps=10)
        examples = (TEXTS, [[SECOND_TEXTS[0], TEXTS[1], ""], SECOND_TEXTS + TEXTS[:1]])
        return model, lambda m: m.predict(examples, verbose=0)
    if kind == "token_classifier":
        model = BertTokenClassifier(backbone, 4, tokenizer=tokenizer, sequence_length=32)
        model.compile(learning_rate=1e-3, total_steps=10)
        return model, lambda m: m.predict(WORDS, verbose=0)
    if kind == "question_answerer":
        model = BertQuestionAnswerer(
            backbone, tokenizer=tokenizer, sequence_length=32, doc_stride=8, max_query_length=8
        )
        model.compile(learning_rate=1e-3, total_steps=10)
        return model, lambda m: m.predict((QUESTIONS, CONTEXTS), verbose=0)
    raise ValueError(kind)


@pytest.mark.parametrize(
    "kind",
    [
        "backbone",
        "pretrainer",
        "pair_classifier",
        "multi_label_classifier",
        "multiple_choice",
        "masked_lm",
        "pair_regressor",
        "token_classifier",
        "question_answerer",
    ],
)
def test_models_survive_a_keras_file(kind, tokenizer, tmp_path):
    model, outputs = build_model(kind, tokenizer)
    if model.compiled:
        model.optimizer.build(model.trainable_variables)
    restored = assert_keras_file_round_trip(model, tmp_path, outputs)
    if model.compiled:  # The optimizer comes back with its schedule, settings and variables.
        assert type(restored.optimizer) is type(model.optimizer)
        assert_same_outputs(restored.optimizer.variables, model.optimizer.variables)


@pytest.mark.slow
def test_a_classifier_saved_mid_training_goes_on_as_it_would_have(tokenizer, tmp_path):
    """Saved after a step of `fit`, loaded, and trained one more step: the
    same weights as without the file (the optimizer's moments, step count and
    schedule were in it). Dropout off: with it on, the loaded model's dropout
    draws differed from the uninterrupted model's (`keras-bert3 pretrain`
    resumes exactly, draws included, from its own checkpoints)."""
    labels = np.array([0, 1])
    model = BertClassifier(
        tiny_backbone(tokenizer.vocabulary_size(), dropout=0.0), 3, tokenizer=tokenizer, sequence_length=32, dropout=0.0
    )
    model.compile(learning_rate=1e-3, total_steps=10)
    model.fit(TEXTS, labels, batch_size=2, epochs=1, verbose=0)
    model.save(tmp_path / "classifier.keras")
    restored = keras.saving.load_model(tmp_path / "classifier.keras")
    assert int(restored.optimizer.iterations) == 1
    for task in (model, restored):
        task.fit(TEXTS, labels, batch_size=2, epochs=1, verbose=0)
    assert_same_outputs(restored.get_weights(), model.get_weights(), atol=1e-7)


def tokens(tokenizer):
    return [ids.tolist() for ids in tokenizer(TEXTS)]


@pytest.mark.parametrize(
    "kind",
    [
        "tokenizer",
        "segment_joiner",
        "text_preprocessor",
        "token_classifier_preprocessor",
        "question_answering_preprocessor",
    ],
)
@pytest.mark.backend_free
def test_preprocessing_layers_survive_serialization(kind, tokenizer):
    ragged = lambda x: x.to_list() if hasattr(x, "to_list") else x  # noqa: E731
    if kind == "tokenizer":
        layer, outputs = tokenizer, lambda layer: ragged(layer(TEXTS))
    elif kind == "segment_joiner":
        layer = BertSegmentJoiner(
            24,
            cls_token_id=tokenizer.cls_token_id,
            sep_token_id=tokenizer.sep_token_id,
            pad_token_id=tokenizer.pad_token_id,
        )
        first, second = tokenizer(TEXTS), tokenizer(SECOND_TEXTS)
        outputs = lambda layer: layer(first, second)  # noqa: E731
    elif kind == "text_preprocessor":
        layer = BertTextPreprocessor(tokenizer, sequence_length=24, sentence_pairs=True, pad_to_multiple_of=8)
        outputs = lambda layer: layer((TEXTS, SECOND_TEXTS))  # noqa: E731
    elif kind == "token_classifier_preprocessor":
        layer = BertTokenClassifierPreprocessor(tokenizer, sequence_length=24, pad_to_multiple_of=8)
        outputs = lambda layer: layer(WORDS)  # noqa: E731
    else:
        layer = QuestionAnsweringPreprocessor(tokenizer, sequence_length=32, doc_stride=8, max_query_length=8)
        outputs = lambda layer: {k: ragged(v) for k, v in layer((QUESTIONS, CONTEXTS)).items()}  # noqa: E731
    restored = assert_serialization_round_trip(layer)
    assert_same_outputs(outputs(restored), outputs(layer))


def decayed(optimizer) -> dict[str, float]:
    """One step with zero gradients on a kernel and a LayerNorm gamma, both 1.0:
    what weight decay alone leaves of each."""
    variables = [keras.Variable(np.ones(2, "float32"), name=name) for name in ("kernel", "gamma")]
    optimizer.apply_gradients([(np.zeros(2, "float32"), v) for v in variables])
    return {v.name: float(keras.ops.convert_to_numpy(v.value)[0]) for v in variables}


def test_optimizers_and_schedule_survive_serialization():
    from keras_bert3.optimizers.bert_optimizer import bert_optimizer

    for decay in ("linear", "cosine"):
        schedule = LinearWarmupLinearDecay(1e-3, 10, 100, end_learning_rate=1e-5, decay=decay, steps_per_update=2)
        restored = assert_serialization_round_trip(schedule)
        steps = np.array([0, 5, 10, 50, 100, 200])
        np.testing.assert_allclose([float(restored(s)) for s in steps], [float(schedule(s)) for s in steps], rtol=0)
    for kind, optimizer_class in (("adamw", BertAdamW), ("lamb", BertLamb)):
        optimizer = bert_optimizer(learning_rate=0.5, total_steps=10, warmup_steps=0, weight_decay=0.1, kind=kind)
        assert type(optimizer) is optimizer_class
        restored = assert_serialization_round_trip(optimizer)
        # Restored, it still spares LayerNorm (and biases) from weight decay.
        after = decayed(restored)
        assert after == decayed(optimizer)
        assert after["gamma"] == 1.0 and after["kernel"] < 1.0
