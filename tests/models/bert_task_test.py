"""BertTask: a subclass must define the hooks the base calls and name settings
that exist; every task refuses bad input kinds with one clear error."""

import pytest

from keras_bert3.models.bert_classifier import BertClassifier
from keras_bert3.models.bert_question_answerer import BertQuestionAnswerer
from keras_bert3.models.bert_task import BertTask
from keras_bert3.models.bert_token_classifier import BertTokenClassifier
from tests.test_case import assert_bad_inputs_refused
from tests.test_case import tiny_backbone

TASKS = {
    "classifier": lambda backbone, tokenizer: (BertClassifier(backbone, 2, tokenizer=tokenizer, sequence_length=16), [0, 1]),
    "token classifier": lambda backbone, tokenizer: (BertTokenClassifier(backbone, 2, tokenizer=tokenizer, sequence_length=16), [[0], [1]]),
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
    with pytest.raises(TypeError, match="Incomplete subclasses BertTask but does not define preprocessor_cls, head_layers, write_saved_model"):

        class Incomplete(BertTask):
            def _dataset(self, x, y=None, sample_weight=None, *, batch_size=None, shuffle=False):
                return None

    class Complete(BertClassifier):  # Hooks inherited from a task count.
        pass

    assert issubclass(Complete, BertTask)

    with pytest.raises(TypeError, match="Misnamed.preset_settings names colour, which neither Misnamed nor BertTextPreprocessor takes"):

        class Misnamed(BertClassifier):
            preset_settings = ("sequence_length", "colour")
