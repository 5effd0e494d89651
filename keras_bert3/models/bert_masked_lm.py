"""BertMaskedLM: BERT's masked language model filling each [MASK] of a text (Devlin et al. 2019, section 3.1, task
1; Hugging Face's `BertForMaskedLM` and its `fill-mask` pipeline, keras-hub's `BertMaskedLM`)."""

import os

import keras
import numpy as np
from keras import ops

from keras_bert3.layers.bert_masked_lm_head import BertMaskedLMHead
from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.bert_task import BertTask
from keras_bert3.models.task_parts import TaskSpec
from keras_bert3.models.task_parts import model_inputs
from keras_bert3.models.task_parts import task_preprocessor
from keras_bert3.preprocessing.bert_text_preprocessor import BertTextPreprocessor

PREDICT_CHUNK = 256  # Texts a call of the model in `predict`.


@keras.saving.register_keras_serializable(package="keras_bert3")
class BertMaskedLM(BertTask):
    """A `BertBackbone` with its masked-LM head (tied to the token embedding): the `top_k` likeliest tokens for each
    `[MASK]` of a text, as Hugging Face's `fill-mask` pipeline gives them (a softmax over the vocabulary).

    `predict(texts)` returns, for each text, a list with one entry per `[MASK]` (in order): a list of `top_k` dicts
    `{"token": str, "token_id": int, "score": float}`, likeliest first. A text without `[MASK]` is refused. Model
    inputs take `mask_positions` (int `(batch, masks)`) besides the token ids and give the logits `(batch, masks,
    vocabulary)`. `from_preset` loads the head of a preset `keras-bert3 pretrain` wrote, of a Hugging Face
    `BertForMaskedLM` or `BertForPreTraining` checkpoint, or of `save_to_preset`; a preset without one is refused.
    It fills masks; pretraining (the head's training) is `BertPretrainer`'s.

    Args:
        tokenizer: the backbone's `BertTokenizer`, or instead `preprocessor`: a `BertTextPreprocessor`.
        sequence_length, pad_to_multiple_of: int. Longer texts are truncated (a [MASK] past it is refused).
        top_k: int. Tokens given for each [MASK].

    Example:
    >>> fill = BertMaskedLM.from_preset("path/to/pretrained")
    >>> fill.predict(["The capital of France is [MASK]."])[0][0][0]["token"]
    'paris'
    """

    preprocessor_cls = BertTextPreprocessor
    spec = TaskSpec(
        saved_model_writer="export_masked_lm",  # keras_bert3.export.export_masked_lm
        raw_inputs="texts holding [MASK] (a list, numpy array or tf.string tensor of strings)",
        preset_settings=("sequence_length", "pad_to_multiple_of", "top_k"),
        per_token_outputs=False,
        job="keras_bert3.jobs.fill_mask_job:FillMaskJob",
        command_name="fill-mask",
    )

    def __init__(
        self,
        backbone: BertBackbone,
        *,
        tokenizer=None,
        preprocessor: BertTextPreprocessor | None = None,
        sequence_length: int = 128,
        pad_to_multiple_of: int = 16,
        top_k: int = 5,
        **kwargs,
    ):
        settings = {"sequence_length": sequence_length, "pad_to_multiple_of": pad_to_multiple_of}
        preprocessor = task_preprocessor(type(self), backbone, preprocessor, tokenizer, **settings)
        if int(top_k) < 1:
            raise ValueError(f"top_k={top_k}: give how many tokens to return for each [MASK], at least 1.")

        # === Layers ===
        self.backbone = backbone
        self.preprocessor = preprocessor
        self.masked_lm_head = BertMaskedLMHead.of_backbone(backbone)  # As `BertPretrainer`'s: its weights by name.

        # === Functional graph ===
        inputs = model_inputs() | {"mask_positions": keras.Input(shape=(None,), dtype="int32", name="mask_positions")}
        sequence = backbone({name: inputs[name] for name in ("token_ids", "segment_ids", "padding_mask")})
        logits = self.masked_lm_head(sequence["sequence_output"], inputs["mask_positions"])  # (batch, masks, vocab)
        super().__init__(inputs=inputs, outputs=logits, **kwargs)

        # === Config ===
        self.top_k = int(top_k)
        self.compile()

    @classmethod
    def from_preset(cls, preset: str, **kwargs):
        """A fill-mask model on `preset`: a `save_to_preset` folder, or a backbone preset with a masked-LM head (one
        `keras-bert3 pretrain` wrote, or a Hugging Face `BertForMaskedLM` / `BertForPreTraining` checkpoint)."""
        from keras_bert3.presets.huggingface_checkpoint import is_huggingface_checkpoint
        from keras_bert3.presets.huggingface_checkpoint import load_huggingface_heads
        from keras_bert3.presets.pretrainer_preset import HEADS_WEIGHTS_FILE
        from keras_bert3.presets.pretrainer_preset import load_head_arrays
        from keras_bert3.presets.preset_loader import resolve_preset

        task = super().from_preset(preset, **kwargs)
        if task.head_from_preset:
            return task
        preset_dir = resolve_preset(preset)
        if os.path.isfile(os.path.join(preset_dir, HEADS_WEIGHTS_FILE)):
            head = task.masked_lm_head  # Its own weights, as the pretrainer's are stored (the embedding is tied).
            load_head_arrays(preset_dir, {v.path: v for v in head.weights if v.path.startswith(head.name + "/")})
        elif not (is_huggingface_checkpoint(preset_dir) and load_huggingface_heads(preset_dir, task.masked_lm_head)):
            raise ValueError(
                f"{preset} has no masked-LM head: fill-mask needs a model pretrained with it (a preset of "
                "`keras-bert3 pretrain`, or a Hugging Face BertForMaskedLM or BertForPreTraining checkpoint)."
            )
        task.head_from_preset = True
        return task

    def default_loss(self):
        return keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    # === Texts in ===

    def preprocess(self, x, y=None, sample_weight=None, *, batch_size=32, shuffle=False, keep_order=False):
        """Batches of model inputs (with `mask_positions`) for texts, in order; labels are refused: the head is
        trained by pretraining (`BertPretrainer`, `keras-bert3 pretrain`)."""
        import tensorflow as tf

        if y is not None:
            raise ValueError(
                "BertMaskedLM fills masks; it does not train on labels. Pretrain the head with BertPretrainer "
                "(keras-bert3 pretrain), then load that preset here."
            )
        return tf.data.Dataset.from_tensor_slices(self.mask_inputs(x)).batch(batch_size)

    def mask_inputs(self, texts) -> dict:
        """Numpy model inputs of `texts` and each one's `mask_positions` (padded with 0; `mask_count` says how
        many); a text without [MASK] within `sequence_length` is refused, naming it."""
        from keras_bert3.preprocessing.text_inputs import python_texts

        texts = list(python_texts(texts))
        inputs = {name: np.asarray(value) for name, value in self.preprocessor(texts).items()}
        is_mask = inputs["token_ids"] == self.preprocessor.tokenizer.mask_token_id
        counts = is_mask.sum(axis=1)
        if len(texts) and counts.min() == 0:
            bad = int(np.argmin(counts))
            raise ValueError(
                f"Text {bad} has no [MASK] within its first {self.preprocessor.sequence_length} tokens: "
                f"{texts[bad][:80]!r}. Write [MASK] where a token should be filled in."
            )
        positions = np.zeros((len(texts), max(int(counts.max(initial=0)), 1)), "int32")
        for row, columns in enumerate(is_mask):
            found = np.flatnonzero(columns)
            positions[row, : len(found)] = found
        return inputs | {"mask_positions": positions, "mask_count": counts.astype("int32")}

    # === Predict: the top_k tokens of each [MASK] ===

    def predict(self, x, batch_size=None, **kwargs):
        """For texts, each one's [MASK]s filled (see the class); model inputs (or a dataset) give the logits."""
        from keras_bert3.preprocessing.bert_text_preprocessor import is_model_inputs

        if is_model_inputs(x) or hasattr(x, "element_spec"):
            return keras.Model.predict(self, x, batch_size=batch_size, **kwargs)
        return self.predict_examples(x, None)

    def predict_examples(self, x, run) -> list[list[list[dict]]]:
        """The top_k tokens of each [MASK] of each text, `PREDICT_CHUNK` texts a call of the model."""
        inputs = self.mask_inputs(x)
        vocabulary = self.preprocessor.tokenizer.get_vocabulary()
        filled = []
        for start in range(0, len(inputs["mask_count"]), PREDICT_CHUNK):
            chunk = {name: value[start : start + PREDICT_CHUNK] for name, value in inputs.items()}
            logits = self.predict_on_batch({k: v for k, v in chunk.items() if k != "mask_count"})
            scores, ids = top_tokens(logits, self.top_k)
            for count, row_scores, row_ids in zip(chunk["mask_count"], scores, ids):
                filled.append(
                    [
                        [{"token": vocabulary[i], "token_id": int(i), "score": float(p)} for i, p in zip(ids_, scores_)]
                        for ids_, scores_ in zip(row_ids[:count], row_scores[:count])
                    ]
                )
        return filled


def top_tokens(logits, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The `k` likeliest tokens of each row of `logits` `(..., vocabulary)`: their probabilities (softmax) and ids,
    likeliest first."""
    probabilities = ops.softmax(ops.cast(logits, "float32"), axis=-1)
    scores, ids = ops.top_k(probabilities, k=k)
    return np.asarray(scores), np.asarray(ids)
