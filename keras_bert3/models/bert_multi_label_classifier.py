"""BertMultiLabelClassifier: BERT fine-tuned to give a text any number of labels, a sigmoid and binary cross-entropy
for each (Hugging Face's `BertForSequenceClassification` with `problem_type="multi_label_classification"`)."""

import keras
import numpy as np
from keras import ops

from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.pooled_text_task import PooledTextTask
from keras_bert3.models.task_parts import HuggingFaceHead
from keras_bert3.models.task_parts import TaskSpec
from keras_bert3.preprocessing.bert_text_preprocessor import BertTextPreprocessor


@keras.saving.register_keras_serializable(package="keras_bert3")
class BertMultiLabelClassifier(PooledTextTask):
    """A `BertBackbone` with dropout and one dense layer on the pooled output: a logit for each of `num_labels`
    labels, each label on or off on its own.

    `fit`, `evaluate` and `predict` take texts (a list of strings), text pairs (a tuple of two lists,
    `sentence_pairs=True`), a `tf.data.Dataset` of them, or model inputs; the targets are multi-hot rows
    `(n, num_labels)` of 0 and 1. `predict` returns logits `(n, num_labels)`, `predict_proba` their sigmoids and
    `predict_labels` which labels pass `threshold`. `from_preset` on a Hugging Face `BertForSequenceClassification`
    checkpoint loads its head.

    Args:
        num_labels: int. Number of labels (1 or more).
        tokenizer: the backbone's `BertTokenizer`, or instead `preprocessor`: a `BertTextPreprocessor`.
        sequence_length, pad_to_multiple_of: int. Longer texts are truncated; a batch's length is
            rounded up to a multiple of `pad_to_multiple_of`.
        sentence_pairs: bool. Inputs are pairs of texts.
        dropout: float. Dropout before the dense layer (the paper: 0.1).
        threshold: float. A label is given where its probability is at least this (`keras-bert3 finetune
            --validation` chooses it on the validation file); the preset and the exports keep it.

    Example:
    >>> tagger = BertMultiLabelClassifier.from_preset("path/to/bert", num_labels=3)
    >>> tagger.fit(texts, [[1, 0, 1], [0, 1, 0], ...], epochs=3)
    >>> tagger.predict_labels(["Some new text."])
    array([[ True, False,  True]])
    """

    spec = TaskSpec(
        saved_model_writer="export_text_classifier",  # One output row per text: keras_bert3.export's writer.
        raw_inputs="texts (a list, numpy array or tf.string tensor of strings; a tuple of two for sentence pairs)",
        preset_settings=("sequence_length", "pad_to_multiple_of", "sentence_pairs", "dropout", "threshold"),
        fine_tuned_settings=("sentence_pairs",),
        head_size_argument=("num_labels", "labels"),
        huggingface_head=HuggingFaceHead("BertForSequenceClassification", prefix="classifier.", layer="output_dense"),
        takes_text_datasets=True,
        per_token_outputs=False,
        onnx_head="multi_label_head",  # keras_bert3.export.onnx_graph.multi_label_head
        job="keras_bert3.jobs.multi_label_job:MultiLabelJob",
        command_name="multi-label-classifier",
    )

    def __init__(
        self,
        backbone: BertBackbone,
        num_labels: int,
        *,
        tokenizer=None,
        preprocessor: BertTextPreprocessor | None = None,
        sequence_length: int = 128,
        pad_to_multiple_of: int = 16,
        sentence_pairs: bool = False,
        dropout: float = 0.1,
        threshold: float = 0.5,
        **kwargs,
    ):
        if int(num_labels) < 1:
            raise ValueError(f"num_labels={num_labels}: a multi-label classifier needs at least 1 label.")
        if not 0.0 < float(threshold) < 1.0:
            raise ValueError(f"threshold={threshold}: a probability between 0 and 1 (not either) is needed.")
        self.num_labels = int(num_labels)
        self.threshold = float(threshold)
        settings = {"sequence_length": sequence_length, "pad_to_multiple_of": pad_to_multiple_of, "dropout": dropout}
        pairs = {"tokenizer": tokenizer, "preprocessor": preprocessor, "sentence_pairs": sentence_pairs}
        super().__init__(backbone, self.num_labels, **pairs, **settings, **kwargs)

    def default_loss(self):
        return keras.losses.BinaryCrossentropy(from_logits=True)

    def default_metrics(self):
        return [keras.metrics.BinaryAccuracy(name="binary_accuracy", threshold=0.0)]  # On logits: probability 0.5.

    def targets(self, y) -> np.ndarray:
        """Multi-hot rows, float32 `(n, num_labels)`; other shapes or values are refused."""
        y = np.asarray(y)
        if y.ndim != 2 or y.shape[1] != self.num_labels:
            raise ValueError(
                f"Targets of shape {y.shape}: a multi-label classifier takes a row of {self.num_labels} zeros and "
                "ones per text (n, num_labels), 1 where the text has the label."
            )
        if y.size and not np.isin(y, (0, 1)).all():
            raise ValueError("Targets must be 0 or 1 (1 where the text has the label).")
        return y.astype("float32")

    def start_at_label_frequencies(self, targets) -> None:
        """Sets the output layer's biases to each label's log-odds in `targets` (multi-hot rows `(n, num_labels)`;
        `(count + 0.5) / (n + 1)`), so that a new head starts at how often each label is given instead of at one
        half. Where few texts have each label, fine-tuning then learns which texts have them from its first steps,
        instead of first pushing every output down (which a bias moving by the learning rate a step takes thousands
        of steps to do). `keras-bert3 finetune` does this for a new head; Hugging Face does not."""
        targets = self.targets(targets)
        frequencies = (targets.sum(0) + 0.5) / (len(targets) + 1)
        self.output_dense.bias.assign(np.log(frequencies / (1 - frequencies)).astype(self.output_dense.bias.dtype))

    def serving_outputs(self, logits) -> dict:
        """What its SavedModel serves for float32 `logits`: `logits`, `probabilities` (sigmoids) and `chosen`
        (bool, the probabilities at or over `threshold`)."""
        probabilities = ops.sigmoid(logits)
        return {"logits": logits, "probabilities": probabilities, "chosen": probabilities >= self.threshold}

    def predict_proba(self, x, **kwargs) -> np.ndarray:
        """Each label's probability `(n, num_labels)` (sigmoid of `predict`)."""
        return np.asarray(ops.sigmoid(self.predict(x, **kwargs)))

    def predict_labels(self, x, **kwargs) -> np.ndarray:
        """Which labels each text has, bool `(n, num_labels)`: a probability at or over `threshold`."""
        return self.predict_proba(x, **kwargs) >= self.threshold
