"""BertRegressor: BERT fine-tuned to score a text or a text pair with one real number, as GLUE's STS-B
(Devlin et al. 2019, section 4.1; Hugging Face's `BertForSequenceClassification` with `num_labels=1`)."""

import keras
import numpy as np

from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.pooled_text_task import PooledTextTask
from keras_bert3.models.task_parts import HuggingFaceHead
from keras_bert3.models.task_parts import TaskSpec
from keras_bert3.preprocessing.bert_text_preprocessor import BertTextPreprocessor


@keras.saving.register_keras_serializable(package="keras_bert3")
class BertRegressor(PooledTextTask):
    """A `BertBackbone` with dropout and one dense unit on the pooled output, trained with mean squared error.

    `fit`, `evaluate` and `predict` take texts (a list of strings), text pairs (a tuple of two lists,
    `sentence_pairs=True`), a `tf.data.Dataset` of them, or model inputs; the targets are numbers. `predict`
    returns the scores, float32 `(n,)`, in input order. `from_preset` on a Hugging Face
    `BertForSequenceClassification` checkpoint of one label (a regression, as STS-B's) loads its head.

    Args:
        tokenizer: the backbone's `BertTokenizer`, or instead `preprocessor`: a `BertTextPreprocessor`.
        sequence_length, pad_to_multiple_of: int. Longer texts are truncated; a batch's length is
            rounded up to a multiple of `pad_to_multiple_of`.
        sentence_pairs: bool. Inputs are pairs of texts (STS-B scores how alike two sentences are).
        dropout: float. Dropout before the dense layer (the paper: 0.1).

    Example:
    >>> regressor = BertRegressor.from_preset("path/to/bert", sentence_pairs=True)
    >>> regressor.fit((first_sentences, second_sentences), similarities, epochs=3)
    >>> regressor.predict((["A man plays a guitar."], ["Someone plays music."])).shape
    (1,)
    """

    spec = TaskSpec(
        saved_model_writer="export_text_classifier",  # One output row per text: keras_bert3.export's writer.
        raw_inputs="texts (a list, numpy array or tf.string tensor of strings; a tuple of two for sentence pairs)",
        preset_settings=("sequence_length", "pad_to_multiple_of", "sentence_pairs", "dropout"),
        fine_tuned_settings=("sentence_pairs",),
        huggingface_head=HuggingFaceHead("BertForSequenceClassification", prefix="classifier.", layer="output_dense"),
        takes_text_datasets=True,
        per_token_outputs=False,
        onnx_head="regressor_head",  # keras_bert3.export.onnx_graph.regressor_head
        job="keras_bert3.jobs.regressor_job:RegressorJob",
        command_name="regressor",
    )
    head_name = "score"

    def __init__(
        self,
        backbone: BertBackbone,
        *,
        tokenizer=None,
        preprocessor: BertTextPreprocessor | None = None,
        sequence_length: int = 128,
        pad_to_multiple_of: int = 16,
        sentence_pairs: bool = False,
        dropout: float = 0.1,
        **kwargs,
    ):
        settings = dict(sequence_length=sequence_length, pad_to_multiple_of=pad_to_multiple_of, dropout=dropout)
        pairs = dict(tokenizer=tokenizer, preprocessor=preprocessor, sentence_pairs=sentence_pairs)
        super().__init__(backbone, 1, **pairs, **settings, **kwargs)  # (batch, 1), as Keras' regression losses take it.

    def default_loss(self):
        return keras.losses.MeanSquaredError()

    def default_metrics(self):
        return [keras.metrics.MeanAbsoluteError(name="mae")]

    def targets(self, y) -> np.ndarray:
        """The scores, float32 `(n,)`: one target a row, as the fixed batch shapes pad it."""
        return np.asarray(y, "float32").reshape(-1)

    def predict_examples(self, x, run) -> np.ndarray:
        """Scores, float32 `(n,)`."""
        return super().predict_examples(x, run)[:, 0]

    def serving_outputs(self, scores) -> dict:
        """What its SavedModel serves for the float32 `(batch, 1)` outputs: `score`, `(batch,)`."""
        return {"score": scores[:, 0]}
