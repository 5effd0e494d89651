"""SavedModel writers: each task's export, whose `serving_default` takes raw strings;
and the ONNX export (`export_onnx`: model.onnx and tokenizer.json) with its server
(`OnnxTextModel`, on onnxruntime).

A task names its writer here (`BertTask.spec.saved_model_writer`); `BertTask.export`
looks it up when it exports, as models sit a floor below export."""

from keras_bert3.export.onnx_export import OnnxTextModel
from keras_bert3.export.onnx_export import export_onnx
from keras_bert3.export.question_answerer_export import export_question_answerer
from keras_bert3.export.text_classifier_export import export_text_classifier
from keras_bert3.export.token_classifier_export import export_token_classifier

__all__ = [
    "OnnxTextModel",
    "export_onnx",
    "export_question_answerer",
    "export_text_classifier",
    "export_token_classifier",
]
