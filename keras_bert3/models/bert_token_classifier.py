"""BertTokenClassifier: BERT fine-tuned to tag words (Devlin et al. 2019, section 5.3, CoNLL-2003 NER:
one dense layer on every token's final hidden state, each word labelled at its first WordPiece)."""

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
from keras_bert3.preprocessing.bert_token_classifier_preprocessor import BertTokenClassifierPreprocessor
from keras_bert3.preprocessing.word_piece_alignment import IGNORED_LABEL


@keras.saving.register_keras_serializable(package="keras_bert3")
class BertTokenClassifier(BertTask):
    """A `BertBackbone` with dropout and one dense layer on every token.

    `fit` and `evaluate` take sentences as lists of words or as strings (split at ASCII whitespace), with one integer
    label per word, or model inputs with `(batch, length)` labels. A word's label goes to its first WordPiece (a word
    whose first piece is cut is not trained on); other tokens get label -100, left out of the loss and the accuracy
    (Hugging Face's recipe). `predict(sentences)` returns one float32 array `(num_words, num_labels)` of logits per
    sentence, a row of NaN for a word with no piece in the sequence (`predict_labels`: -1); on model inputs, per-token
    logits. `from_preset` on a Hugging Face `BertForTokenClassification` checkpoint loads its head.

    Args:
        num_labels: int. Number of tags (2 or more).
        tokenizer: the backbone's `BertTokenizer`, or instead `preprocessor`: a `BertTokenClassifierPreprocessor`.
        sequence_length, pad_to_multiple_of: int. Longer sentences are truncated; a batch's length is
            rounded up to a multiple of `pad_to_multiple_of`.
        dropout: float. Dropout before the dense layer (the paper: 0.1).

    Example:
    >>> tagger = BertTokenClassifier.from_preset("path/to/bert", num_labels=3)
    >>> tagger.fit([["Call", "os.walk", "first."]], [[0, 1, 0]], epochs=3)
    >>> tagger.predict_labels([["Call", "os.walk"]])  # [array([0, 1])]
    """

    preprocessor_cls = BertTokenClassifierPreprocessor
    spec = TaskSpec(
        saved_model_writer="export_token_classifier",  # keras_bert3.export.export_token_classifier
        raw_inputs="sentences (a list of word lists or of strings, or a numpy array or tf.string tensor of them)",
        preset_settings=("sequence_length", "pad_to_multiple_of", "dropout"),
        head_size_argument=("num_labels", "labels"),
        huggingface_head=HuggingFaceHead("BertForTokenClassification", prefix="classifier.", layer="output_dense"),
        loss_over_labelled_tokens=True,  # Empty rows and unlabelled pieces carry label -100.
        onnx_head="token_classifier_head",  # keras_bert3.export.onnx_graph.token_classifier_head
        strings_front_end="words",
        job="keras_bert3.jobs.token_classifier_job:TokenClassifierJob",
        command_name="token-classifier",
    )

    def __init__(
        self,
        backbone: BertBackbone,
        num_labels: int,
        *,
        tokenizer=None,
        preprocessor: BertTokenClassifierPreprocessor | None = None,
        sequence_length: int = 128,
        pad_to_multiple_of: int = 16,
        dropout: float = 0.1,
        **kwargs,
    ):
        if int(num_labels) < 2:
            raise ValueError(f"num_labels={num_labels}: a token classifier needs at least 2 labels.")
        preprocessor = task_preprocessor(
            type(self),
            backbone,
            preprocessor,
            tokenizer,
            sequence_length=sequence_length,
            pad_to_multiple_of=pad_to_multiple_of,
        )

        # === Layers ===
        self.backbone = backbone
        self.preprocessor = preprocessor
        self.output_dropout = FastMaskDropout(dropout, dtype=backbone.dtype_policy, name="output_dropout")
        self.output_dense = dense_head(backbone, num_labels, name="logits")

        # === Functional graph ===
        inputs = model_inputs()
        sequence = backbone(inputs)["sequence_output"]  # (batch, length, hidden)
        logits = self.output_dense(self.output_dropout(sequence))  # (batch, length, num_labels)
        super().__init__(inputs=inputs, outputs=logits, **kwargs)

        # === Config ===
        self.num_labels = int(num_labels)
        self.dropout = dropout
        self.leave_pooler_out()
        self.compile()

    def default_loss(self):
        return keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=IGNORED_LABEL)

    def default_metrics(self):
        return [_LabelledTokenAccuracy(name="accuracy")]

    # === Words in ===

    def preprocess(self, x, y=None, sample_weight=None, *, batch_size=32, shuffle=False, keep_order=False):
        """A tf.data pipeline of batches of model inputs for sentences and their word labels,
        grouped by length unless `keep_order`."""
        from keras_bert3.preprocessing.token_classification_dataset import token_classification_dataset

        options = dict(batch_size=batch_size, shuffle=shuffle, bucket=not keep_order, sample_weight=sample_weight)
        return token_classification_dataset(x, y, preprocessor=self.preprocessor, num_labels=self.num_labels, **options)

    # === Predict (`BertTask.predict`): logits per word ===

    def predict_examples(self, x, run) -> list[np.ndarray]:
        """Per-word logits (each word's first piece): a list (input order) of float32
        `(num_words, num_labels)` arrays; NaN rows for words without a piece in the sequence."""
        from keras_bert3.preprocessing.token_classification_dataset import word_batch

        words = word_batch(x)
        if int(words.nrows()) == 0:
            return []
        batch = {name: value.numpy() for name, value in self.preprocessor(words).items()}
        logits = run(batch)  # (n, length, num_labels)
        positions, counts = batch["word_positions"], words.row_lengths().numpy()
        results = []
        for row, count in enumerate(counts):
            where = positions[row, :count]
            word_logits = np.asarray(logits[row, np.maximum(where, 0)], "float32")
            word_logits[where < 0] = np.nan
            results.append(word_logits)
        return results

    def predict_labels(self, x, batch_size=None) -> list[np.ndarray]:
        """Per-word label ids: a list (input order) of int32 `(num_words,)`
        arrays, -1 for words without a piece in the sequence."""
        return [
            np.where(np.isnan(logits).any(-1), -1, np.argmax(np.nan_to_num(logits), -1)).astype("int32")
            for logits in self.predict(x, batch_size=batch_size)
        ]


@keras.saving.register_keras_serializable(package="keras_bert3")
class _LabelledTokenAccuracy(keras.metrics.SparseCategoricalAccuracy):
    """Accuracy over the labelled tokens only (labels -100 are left out)."""

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = ops.convert_to_tensor(y_true)
        labelled = ops.cast(ops.not_equal(y_true, IGNORED_LABEL), "float32")  # (batch, length)
        if sample_weight is not None:
            sample_weight = ops.convert_to_tensor(sample_weight, "float32")
            while len(sample_weight.shape) < len(labelled.shape):
                sample_weight = ops.expand_dims(sample_weight, -1)  # A weight per sentence.
            labelled = labelled * sample_weight
        return super().update_state(ops.where(ops.equal(y_true, IGNORED_LABEL), 0, y_true), y_pred, labelled)
