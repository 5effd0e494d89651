"""Each task's SavedModel writer (`serving_default` takes raw strings), the ONNX export
(`export_onnx`) and its server (`OnnxTextModel`). A task names its writer
(`BertTask.spec.saved_model_writer`) and `BertTask.export` looks it up: models sit a floor below."""

from keras_bert3.export.masked_lm_export import export_masked_lm
from keras_bert3.export.multiple_choice_export import export_multiple_choice
from keras_bert3.export.onnx_export import OnnxTextModel
from keras_bert3.export.onnx_export import export_onnx
from keras_bert3.export.question_answerer_export import export_question_answerer
from keras_bert3.export.text_classifier_export import export_text_classifier
from keras_bert3.export.token_classifier_export import export_token_classifier

__all__ = [
    "OnnxTextModel",
    "export_masked_lm",
    "export_multiple_choice",
    "export_onnx",
    "export_question_answerer",
    "export_text_classifier",
    "export_token_classifier",
]
