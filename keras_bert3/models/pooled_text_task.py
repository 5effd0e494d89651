"""PooledTextTask: the base of the tasks of one output row per text or text pair, a dense layer on BERT's pooled
[CLS] output (`BertClassifier`, `BertRegressor`, `BertMultiLabelClassifier`; Devlin et al. 2019, section 4.1)."""

import numpy as np

from keras_bert3.layers.fast_mask_dropout import FastMaskDropout
from keras_bert3.models.bert_task import BertTask
from keras_bert3.models.task_inputs import is_dataset
from keras_bert3.models.task_parts import dense_head
from keras_bert3.models.task_parts import model_inputs
from keras_bert3.models.task_parts import task_preprocessor
from keras_bert3.preprocessing.bert_text_preprocessor import BertTextPreprocessor


class PooledTextTask(BertTask):
    """A `BertBackbone` with dropout and one dense layer of `units` on the pooled output.

    The last block computes the [CLS] row alone (`BertBackbone.pooled_output`). `fit`, `evaluate` and `predict` take
    texts (a list of strings), text pairs (a tuple of two lists, `sentence_pairs=True`), a `tf.data.Dataset` of
    them, or model inputs. A subclass declares its `spec`, names its layer (`head_name`), passes its constructor's
    settings and `units` to this one, and may change the targets (`targets`) and the predictions (`predict_examples`).
    """

    spec = None  # A base: each subclass declares its own.
    preprocessor_cls = BertTextPreprocessor
    head_name = "logits"
    class_targets = False  # Targets are class ids in [0, units), checked.

    def __init__(
        self,
        backbone,
        units: int,
        *,
        tokenizer,
        preprocessor,
        sequence_length,
        pad_to_multiple_of,
        sentence_pairs,
        dropout,
        **kwargs,
    ):
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
        self.output_dense = dense_head(backbone, units, name=self.head_name)

        # === Functional graph ===
        inputs = model_inputs()
        pooled = backbone.pooled_output(inputs)  # (batch, hidden)
        outputs = self.output_dense(self.output_dropout(pooled))  # (batch, units)
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

        # === Config ===
        self.dropout = dropout
        self.compile()

    @property
    def sentence_pairs(self) -> bool:
        return self.preprocessor.sentence_pairs

    # === Raw text in ===

    def targets(self, y):
        """`y` as the loss takes it (a subclass's hook): as given here."""
        return y

    def preprocess(self, x, y=None, sample_weight=None, *, batch_size=32, shuffle=False, keep_order=False):
        """A tf.data pipeline of batches of model inputs for texts (or a dataset of them) and their targets,
        grouped by length unless `keep_order`."""
        from keras_bert3.preprocessing.text_classification_dataset import text_classification_dataset

        if not is_dataset(x) and y is not None:
            y = self.targets(y if isinstance(y, (np.ndarray, list, tuple)) else np.asarray(y))  # e.g. pandas.
        options = dict(batch_size=batch_size, shuffle=shuffle, bucket=not keep_order, sample_weight=sample_weight)
        class_count = self.output_dense.units if self.class_targets else None
        return text_classification_dataset(x, y, preprocessor=self.preprocessor, num_classes=class_count, **options)

    # === Predict (`BertTask.predict`): the outputs `(n, units)` for texts or pairs ===

    def predict_examples(self, x, run) -> np.ndarray:
        """The outputs `(n, units)` for texts or pairs (float32 `(0, units)` for none): tokenized `TOKENIZE_CHUNK`
        at a time, each chunk `run` on its own."""
        import tensorflow as tf

        from keras_bert3.preprocessing.text_classification_dataset import TOKENIZE_CHUNK
        from keras_bert3.preprocessing.text_classification_dataset import text_arrays

        arrays = text_arrays(x, self.preprocessor)
        chunks = [np.zeros((0, self.output_dense.units), "float32")]
        for start in range(0, len(arrays[0]), TOKENIZE_CHUNK):
            texts = tuple(tf.constant(array[start : start + TOKENIZE_CHUNK], tf.string) for array in arrays)
            batch = self.preprocessor(texts if len(texts) == 2 else texts[0])
            chunks.append(run({name: value.numpy() for name, value in batch.items()}))
        return np.concatenate(chunks)
