"""BertMultipleChoice: BERT fine-tuned to choose among a context's possible continuations or answers, as SWAG
(Devlin et al. 2019, section 4.4; Hugging Face's `BertForMultipleChoice`)."""

import keras
import numpy as np
from keras import ops

from keras_bert3.layers.choice_rows import ChoicesAsRows
from keras_bert3.layers.choice_rows import RowsAsChoices
from keras_bert3.layers.fast_mask_dropout import FastMaskDropout
from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.bert_task import BertTask
from keras_bert3.models.task_parts import HuggingFaceHead
from keras_bert3.models.task_parts import TaskSpec
from keras_bert3.models.task_parts import dense_head
from keras_bert3.models.task_parts import model_inputs
from keras_bert3.models.task_parts import task_preprocessor
from keras_bert3.preprocessing.multiple_choice_preprocessor import MultipleChoicePreprocessor

CHOICE_FIELDS = ("context", "choices")  # A dict of raw examples; "question" may join them.


@keras.saving.register_keras_serializable(package="keras_bert3")
class BertMultipleChoice(BertTask):
    """A `BertBackbone` scoring each (context, choice) pair by one dense unit on its pooled output, with a softmax
    over an example's choices.

    `fit`, `evaluate` and `predict` take a dict of `context` (strings), `choices` (a list of choices per context,
    the same number for each) and optionally `question` (strings, joined before each choice, as SWAG's second
    sentence starts every ending); a tuple `(contexts, choices)`; or model inputs `(batch, choices, length)`. The
    labels are the indices of the right choices. `predict` returns logits `(n, choices)`; `predict_proba` their
    softmax. `from_preset` on a Hugging Face `BertForMultipleChoice` checkpoint loads its head.

    Args:
        tokenizer: the backbone's `BertTokenizer`, or instead `preprocessor`: a `MultipleChoicePreprocessor`.
        sequence_length, pad_to_multiple_of: int. Longer pairs are truncated; a batch's length is rounded up
            to a multiple of `pad_to_multiple_of`.
        dropout: float. Dropout before the dense layer (the paper: 0.1).

    Example:
    >>> chooser = BertMultipleChoice.from_preset("path/to/bert", sequence_length=64)
    >>> chooser.fit({"context": contexts, "choices": endings}, right_endings, epochs=3)
    >>> chooser.predict({"context": ["She opened the door."], "choices": [["It rained.", "She walked in."]]})
    array([[-1.2,  2.3]], dtype=float32)
    """

    preprocessor_cls = MultipleChoicePreprocessor
    spec = TaskSpec(
        saved_model_writer="export_multiple_choice",  # keras_bert3.export.export_multiple_choice
        raw_inputs="a dict of context (strings), choices (a list of choices each) and optional question, or a tuple "
        "(contexts, choices)",
        preset_settings=("sequence_length", "pad_to_multiple_of", "dropout"),
        huggingface_head=HuggingFaceHead("BertForMultipleChoice", prefix="classifier.", layer="output_dense"),
        raw_dict_keys=CHOICE_FIELDS,
        per_token_outputs=False,
        inputs_per_choice=True,
        onnx_head="multiple_choice_head",  # keras_bert3.export.onnx_graph.multiple_choice_head
        strings_front_end="context_choices",
        job="keras_bert3.jobs.multiple_choice_job:MultipleChoiceJob",
        command_name="multiple-choice",
    )

    def __init__(
        self,
        backbone: BertBackbone,
        *,
        tokenizer=None,
        preprocessor: MultipleChoicePreprocessor | None = None,
        sequence_length: int = 128,
        pad_to_multiple_of: int = 16,
        dropout: float = 0.1,
        **kwargs,
    ):
        settings = {"sequence_length": sequence_length, "pad_to_multiple_of": pad_to_multiple_of}
        preprocessor = task_preprocessor(type(self), backbone, preprocessor, tokenizer, **settings)

        # === Layers ===
        self.backbone = backbone
        self.preprocessor = preprocessor
        self.choices_as_rows = ChoicesAsRows(name="choices_as_rows")
        self.output_dropout = FastMaskDropout(dropout, dtype=backbone.dtype_policy, name="output_dropout")
        self.output_dense = dense_head(backbone, 1, name="score")
        self.rows_as_choices = RowsAsChoices(name="rows_as_choices")

        # === Functional graph ===
        inputs = model_inputs(choices=True)  # (batch, choices, length)
        pooled = backbone.pooled_output({name: self.choices_as_rows(value) for name, value in inputs.items()})
        scores = self.output_dense(self.output_dropout(pooled))  # (batch * choices, 1)
        logits = self.rows_as_choices(scores, inputs["padding_mask"])  # (batch, choices)
        super().__init__(inputs=inputs, outputs=logits, **kwargs)

        # === Config ===
        self.dropout = dropout
        self.compile()

    # === Raw examples in ===

    def preprocess(self, x, y=None, sample_weight=None, *, batch_size=32, shuffle=False, keep_order=False):
        """A tf.data pipeline of batches of model inputs `(batch, choices, length)` (and labels) for raw examples,
        tokenized a batch at a time, in order unless `shuffle`."""
        import tensorflow as tf

        contexts, choices = choice_arrays(x)
        columns = {"context": contexts, "choices": choices}
        if y is not None:
            columns["label"] = check_choice_labels(y, choices.shape[1], len(contexts))
        if sample_weight is not None:
            columns["sample_weight"] = np.asarray(sample_weight, "float32").reshape(-1)
        dataset = tf.data.Dataset.from_tensor_slices(columns)
        if shuffle:
            dataset = dataset.shuffle(max(len(contexts), 1), reshuffle_each_iteration=True)

        def inputs_and_targets(batch):
            inputs = self.preprocessor((batch["context"], batch["choices"]))
            rest = tuple(batch[name] for name in ("label", "sample_weight") if name in batch)
            return (inputs, *rest) if rest else inputs

        return dataset.batch(batch_size).map(inputs_and_targets, num_parallel_calls=tf.data.AUTOTUNE).prefetch(2)

    # === Predict (`BertTask.predict`): logits `(n, choices)` ===

    def predict_examples(self, x, run) -> np.ndarray:
        """Logits `(n, choices)`: the raw examples tokenized `PREDICT_CHUNK` at a time, each chunk `run` on its own."""
        contexts, choices = choice_arrays(x)
        chunks = [np.zeros((0, choices.shape[1]), "float32")]
        for start in range(0, len(contexts), PREDICT_CHUNK):
            part = slice(start, start + PREDICT_CHUNK)
            batch = self.preprocessor((contexts[part], choices[part]))
            chunks.append(run({name: value.numpy() for name, value in batch.items()}))
        return np.concatenate(chunks)

    def serving_outputs(self, logits) -> dict:
        """What its SavedModel serves for float32 `logits` `(batch, choices)`: `logits` and `probabilities`."""
        return {"logits": logits, "probabilities": ops.softmax(logits, axis=-1)}

    def predict_proba(self, x, **kwargs) -> np.ndarray:
        """Each choice's probability `(n, choices)` (softmax of `predict` over the choices)."""
        return np.asarray(ops.softmax(self.predict(x, **kwargs), axis=-1))


PREDICT_CHUNK = 1024  # Examples tokenized per call of `predict`.


def choice_arrays(x) -> tuple[np.ndarray, np.ndarray]:
    """Contexts `(n,)` and choices `(n, choices)` (object arrays of str) of raw examples: a dict of `context`,
    `choices` and optional `question` (joined before each choice), or a tuple `(contexts, choices)`. Examples with
    different numbers of choices, or fewer than 2, are refused naming the first."""
    if isinstance(x, dict):
        missing = [name for name in CHOICE_FIELDS if name not in x]
        if missing:
            raise ValueError(f"Multiple-choice examples need {', '.join(missing)}; got keys {sorted(x)}.")
        contexts, choices, questions = x["context"], x["choices"], x.get("question")
    elif isinstance(x, tuple) and len(x) == 2:
        (contexts, choices), questions = x, None
    else:
        raise TypeError(
            f"Multiple-choice examples are a dict of context and choices, or (contexts, choices); got {type(x).__name__}."
        )
    contexts, choices = [str(c) for c in contexts], [[str(c) for c in row] for row in choices]
    if len(choices) != len(contexts):
        raise ValueError(f"{len(contexts)} contexts but {len(choices)} lists of choices.")
    counts = [len(row) for row in choices]
    if counts and (min(counts) != max(counts) or counts[0] < 2):
        bad = next(i for i, count in enumerate(counts) if count != counts[0] or count < 2)
        raise ValueError(
            f"Example {bad} has {counts[bad]} choices, example 0 {counts[0]}: every example needs the same number of "
            "choices, at least 2."
        )
    if questions is not None:
        choices = [[f"{question} {choice}" for choice in row] for question, row in zip(questions, choices)]
    as_array = lambda values, shape: np.array(values, dtype=object).reshape(shape)  # noqa: E731
    return as_array(contexts, (len(contexts),)), as_array(choices, (len(contexts), counts[0] if counts else 2))


def check_choice_labels(labels, count: int, examples: int) -> np.ndarray:
    """The right choices' indices as int32 `(n,)`, each in `[0, count)`."""
    labels = np.asarray(labels).reshape(-1)
    if labels.dtype.kind not in "iu":
        raise ValueError(f"Labels are the indices of the right choices (0..{count - 1}), got dtype {labels.dtype}.")
    if len(labels) != examples:
        raise ValueError(f"{examples} examples but {len(labels)} labels.")
    bad = labels[(labels < 0) | (labels >= count)]
    if bad.size:
        raise ValueError(f"Label {bad[0]} is no choice: each example has {count} choices, 0..{count - 1}.")
    return labels.astype("int32")
