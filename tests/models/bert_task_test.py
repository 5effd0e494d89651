"""BertTask: a subclass must define the hooks the base calls and name settings that exist."""

import pytest

from keras_bert3.models.bert_classifier import BertClassifier
from keras_bert3.models.bert_task import BertTask


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
