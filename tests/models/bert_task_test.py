"""BertTask: a subclass must define the hooks the base calls and name settings
that exist; every task refuses bad input kinds with one clear error."""

import dataclasses

import pytest

from keras_bert3.models.bert_classifier import BertClassifier
from keras_bert3.models.bert_masked_lm import BertMaskedLM
from keras_bert3.models.bert_multi_label_classifier import BertMultiLabelClassifier
from keras_bert3.models.bert_multiple_choice import BertMultipleChoice
from keras_bert3.models.bert_regressor import BertRegressor
from keras_bert3.models.bert_question_answerer import BertQuestionAnswerer
from keras_bert3.models.bert_task import BertTask
from keras_bert3.models.bert_token_classifier import BertTokenClassifier
from tests.test_case import assert_bad_inputs_refused
from tests.test_case import tiny_backbone

pytestmark = pytest.mark.backend_free  # Task definitions and refusals before any step.

TASKS = {
    "classifier": lambda backbone, tokenizer: (
        BertClassifier(backbone, 2, tokenizer=tokenizer, sequence_length=16),
        [0, 1],
    ),
    "token classifier": lambda backbone, tokenizer: (
        BertTokenClassifier(backbone, 2, tokenizer=tokenizer, sequence_length=16),
        [[0], [1]],
    ),
    "question answerer": lambda backbone, tokenizer: (
        BertQuestionAnswerer(backbone, tokenizer=tokenizer, sequence_length=32, doc_stride=8, max_query_length=8),
        None,  # Answers go inside the examples.
    ),
}


@pytest.mark.parametrize("task", TASKS)
def test_every_task_refuses_bad_input_kinds_with_one_clear_error(task, tokenizer):
    model, labels = TASKS[task](tiny_backbone(tokenizer.vocabulary_size()), tokenizer)
    assert_bad_inputs_refused(model, labels)


def test_a_subclass_without_its_hooks_is_refused_when_defined():
    with pytest.raises(
        TypeError,
        match="Incomplete subclasses BertTask but does not define preprocessor_cls, spec, predict_examples",
    ):

        class Incomplete(BertTask):
            def preprocess(self, x, y=None, sample_weight=None, *, batch_size=32, shuffle=False, keep_order=False):
                return None

    class Complete(BertClassifier):  # Hooks inherited from a task count.
        pass

    assert issubclass(Complete, BertTask)

    with pytest.raises(
        TypeError,
        match="Misnamed.spec.preset_settings names colour, which neither Misnamed nor BertTextPreprocessor takes",
    ):

        class Misnamed(BertClassifier):
            spec = dataclasses.replace(BertClassifier.spec, preset_settings=("sequence_length", "colour"))


@pytest.mark.parametrize("task_cls", [BertClassifier, BertTokenClassifier, BertQuestionAnswerer])
def test_every_task_names_a_saved_model_writer_and_an_onnx_head_of_export(task_cls):
    """Models sit a floor below export, so a task names its SavedModel writer
    and its ONNX head, and the exporters look them up (a task defined
    elsewhere may give functions: tests/models/fifth_task_test.py)."""
    import keras_bert3.export
    from keras_bert3.export import onnx_graph
    from keras_bert3.export.onnx_text_model import front_end_function

    assert task_cls.spec.saved_model_writer in keras_bert3.export.__all__
    assert callable(getattr(onnx_graph, task_cls.spec.onnx_head))
    assert callable(front_end_function(task_cls.spec.strings_front_end))


# A valid value other than the default, for every setting a task preset stores.
CHANGED_SETTINGS = {
    "sequence_length": 24,
    "pad_to_multiple_of": 8,
    "sentence_pairs": True,
    "dropout": 0.25,
    "doc_stride": 4,
    "max_query_length": 6,
    "max_windows": 3,
    "max_answer_length": 5,
    "null_threshold": -1.5,
    "n_best": 7,
    "threshold": 0.3,
    "top_k": 3,
}
ALL_TASKS = [
    BertClassifier,
    BertTokenClassifier,
    BertQuestionAnswerer,
    BertRegressor,
    BertMultiLabelClassifier,
    BertMultipleChoice,
    BertMaskedLM,
]


@pytest.mark.parametrize("task_cls", ALL_TASKS)
def test_every_setting_given_to_the_constructor_is_kept_and_unknown_ones_are_refused(task_cls, tokenizer):
    """Keras's functional constructor drops keywords it does not know: a task
    must take each of its settings itself, and refuse the others."""
    backbone = tiny_backbone(tokenizer.vocabulary_size())
    head_size = {} if task_cls.spec.head_size_argument is None else {task_cls.spec.head_size_argument[0]: 3}
    settings = {name: CHANGED_SETTINGS[name] for name in task_cls.spec.preset_settings}
    task = task_cls(backbone, tokenizer=tokenizer, **head_size, **settings)
    assert task.task_config() == {**head_size, **settings}
    with pytest.raises(TypeError, match=f"{task_cls.__name__} got unexpected keyword arguments colour, max_length"):
        task_cls(backbone, tokenizer=tokenizer, **head_size, **settings, colour="red", max_length=8)


@pytest.mark.parametrize("task_cls", ALL_TASKS)
def test_a_preprocessor_given_with_other_settings_or_a_tokenizer_is_refused(task_cls, tokenizer):
    """A preprocessor brings its own settings: a setting given beside it that it
    does not have would be lost, so it is refused; settings it has are fine."""
    backbone = tiny_backbone(tokenizer.vocabulary_size())
    head_size = {} if task_cls.spec.head_size_argument is None else {task_cls.spec.head_size_argument[0]: 3}
    settings = {name: CHANGED_SETTINGS[name] for name in task_cls.spec.preset_settings}
    preprocessor = task_cls(backbone, tokenizer=tokenizer, **head_size, **settings).preprocessor
    task = task_cls(backbone, preprocessor=preprocessor, **head_size, **settings)
    assert task.preprocessor is preprocessor and task.task_config() == {**head_size, **settings}
    with pytest.raises(
        ValueError,
        match=rf"{task_cls.__name__} got preprocessor= together with pad_to_multiple_of=32 "
        r"\(the preprocessor's is 8\)",
    ):
        task_cls(backbone, preprocessor=preprocessor, **head_size, pad_to_multiple_of=32)
    with pytest.raises(ValueError, match=r"together with tokenizer= \(the preprocessor has its own\)"):
        task_cls(
            backbone,
            preprocessor=preprocessor,
            tokenizer=tokenizer.__class__.from_config(tokenizer.get_config()),
            **head_size,
        )
    assert (
        task_cls(backbone, preprocessor=preprocessor, tokenizer=preprocessor.tokenizer, **head_size).preprocessor
        is preprocessor
    )
