"""BertClassifier: BERT fine-tuned for text or text-pair classification (Devlin et al. 2019, section 4.1)."""

import keras
import numpy as np
from keras import ops

from keras_bert3.layers.fast_mask_dropout import FastMaskDropout
from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.bert_task import BertTask
from keras_bert3.models.task_parts import HuggingFaceHead
from keras_bert3.models.task_parts import TaskSpec
from keras_bert3.models.task_parts import dense_head
from keras_bert3.models.task_parts import model_inputs
from keras_bert3.models.task_parts import task_preprocessor
from keras_bert3.models.text_rows import predict_text_rows
from keras_bert3.models.text_rows import text_rows_dataset
from keras_bert3.preprocessing.bert_text_preprocessor import BertTextPreprocessor


@keras.saving.register_keras_serializable(package="keras_bert3")
class BertClassifier(BertTask):
    """A `BertBackbone` with dropout and one dense layer on the pooled output.

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

    preprocessor_cls = BertTextPreprocessor
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
        preprocessor = task_preprocessor(
            type(self),
            backbone,
            preprocessor,
            tokenizer,
            sequence_length=sequence_length,
            pad_to_multiple_of=pad_to_multiple_of,
            sentence_pairs=sentence_pairs,
        )

        # === Layers ===
        self.backbone = backbone
        self.preprocessor = preprocessor
        self.output_dropout = FastMaskDropout(dropout, dtype=backbone.dtype_policy, name="output_dropout")
        self.output_dense = dense_head(backbone, num_classes, name="logits")

        # === Functional graph ===
        inputs = model_inputs()
        pooled = backbone.pooled_output(inputs)  # (batch, hidden)
        logits = self.output_dense(self.output_dropout(pooled))  # (batch, num_classes)
        super().__init__(inputs=inputs, outputs=logits, **kwargs)

        # === Config ===
        self.num_classes = int(num_classes)
        self.dropout = dropout
        self.compile()

    @property
    def sentence_pairs(self) -> bool:
        return self.preprocessor.sentence_pairs

    # === Raw text in ===

    def preprocess(self, x, y=None, sample_weight=None, *, batch_size=32, shuffle=False, keep_order=False):
        """A tf.data pipeline of batches of model inputs for texts (or a dataset of them) and their labels,
        grouped by length unless `keep_order`."""
        options = dict(batch_size=batch_size, shuffle=shuffle, keep_order=keep_order, num_classes=self.num_classes)
        return text_rows_dataset(self, x, y, sample_weight, **options)

    # === Predict (`BertTask.predict`): logits `(n, num_classes)` for texts or pairs ===

    def predict_examples(self, x, run) -> np.ndarray:
        """Logits `(n, num_classes)` (float32 `(0, num_classes)` for no texts)."""
        return predict_text_rows(self, x, run, self.num_classes)

    def serving_outputs(self, logits) -> dict:
        """What its SavedModel serves for float32 `logits`: `logits` and `probabilities`."""
        return {"logits": logits, "probabilities": ops.softmax(logits, axis=-1)}

    def predict_proba(self, x, **kwargs) -> np.ndarray:
        """Class probabilities `(n, num_classes)` (softmax of `predict`)."""
        return np.asarray(ops.softmax(self.predict(x, **kwargs), axis=-1))
