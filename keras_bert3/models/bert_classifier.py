"""BertClassifier: BERT fine-tuned for text or text-pair classification (Devlin et al. 2019, section 4.1)."""

import keras
import numpy as np
from keras import ops

from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.pooled_text_task import PooledTextTask
from keras_bert3.models.task_parts import HuggingFaceHead
from keras_bert3.models.task_parts import TaskSpec
from keras_bert3.preprocessing.bert_text_preprocessor import BertTextPreprocessor


@keras.saving.register_keras_serializable(package="keras_bert3")
class BertClassifier(PooledTextTask):
    """A `BertBackbone` with dropout and one dense layer on the pooled output, a softmax over `num_classes`.

    The last block computes the [CLS] row alone (`BertBackbone.pooled_output`). `fit`, `evaluate` and
    `predict` take texts (a list of strings), text pairs (a tuple of two lists, `sentence_pairs=True`),
    a `tf.data.Dataset` of them, or model inputs; `predict` returns logits `(n, num_classes)` in input
    order. `from_preset` on a Hugging Face `BertForSequenceClassification` checkpoint loads its head.

    Args:
        num_classes: int. Number of classes (2 or more).
        tokenizer: the backbone's `BertTokenizer`, or instead `preprocessor`: a `BertTextPreprocessor`.
        sequence_length, pad_to_multiple_of: int. Longer texts are truncated; a batch's length is
            rounded up to a multiple of `pad_to_multiple_of`.
        sentence_pairs: bool. Inputs are pairs of texts.
        dropout: float. Dropout before the dense layer (the paper: 0.1).

    Example:
    >>> classifier = BertClassifier.from_preset("path/to/bert", num_classes=4)
    >>> classifier.fit(train_texts, train_labels, epochs=3)
    >>> classifier.predict(["Some new text."]).shape
    (1, 4)
    """

    spec = TaskSpec(
        saved_model_writer="export_text_classifier",  # keras_bert3.export.export_text_classifier
        raw_inputs="texts (a list, numpy array or tf.string tensor of strings; a tuple of two for sentence pairs)",
        preset_settings=("sequence_length", "pad_to_multiple_of", "sentence_pairs", "dropout"),
        fine_tuned_settings=("sentence_pairs",),
        head_size_argument=("num_classes", "classes"),
        huggingface_head=HuggingFaceHead("BertForSequenceClassification", prefix="classifier.", layer="output_dense"),
        takes_text_datasets=True,
        per_token_outputs=False,
        onnx_head="classifier_head",  # keras_bert3.export.onnx_graph.classifier_head
        job="keras_bert3.jobs.classifier_job:ClassifierJob",
        command_name="classifier",
    )
    class_targets = True

    def __init__(
        self,
        backbone: BertBackbone,
        num_classes: int,
        *,
        tokenizer=None,
        preprocessor: BertTextPreprocessor | None = None,
        sequence_length: int = 128,
        pad_to_multiple_of: int = 16,
        sentence_pairs: bool = False,
        dropout: float = 0.1,
        **kwargs,
    ):
        if int(num_classes) < 2:
            raise ValueError(f"num_classes={num_classes}: a classifier needs at least 2 classes.")
        self.num_classes = int(num_classes)
        settings = dict(sequence_length=sequence_length, pad_to_multiple_of=pad_to_multiple_of, dropout=dropout)
        pairs = dict(tokenizer=tokenizer, preprocessor=preprocessor, sentence_pairs=sentence_pairs)
        super().__init__(backbone, self.num_classes, **pairs, **settings, **kwargs)

    def serving_outputs(self, logits) -> dict:
        """What its SavedModel serves for float32 `logits`: `logits` and `probabilities`."""
        return {"logits": logits, "probabilities": ops.softmax(logits, axis=-1)}

    def predict_proba(self, x, **kwargs) -> np.ndarray:
        """Class probabilities `(n, num_classes)` (softmax of `predict`)."""
        return np.asarray(ops.softmax(self.predict(x, **kwargs), axis=-1))
