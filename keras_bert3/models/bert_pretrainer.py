"""BertPretrainer: BERT's joint masked-LM and next-sentence pretraining (Devlin et al. 2019, section 3.1)."""

import keras
from keras import ops

from keras_bert3.distribution.cross_replica import cross_replica_sum
from keras_bert3.distribution.cross_replica import num_replicas_in_sync
from keras_bert3.distribution.jax_compilation_cache import enable_jax_compilation_cache
from keras_bert3.layers.bert_masked_lm_head import BertMaskedLMHead
from keras_bert3.layers.nested_objects import deserialized
from keras_bert3.layers.nested_objects import serialized
from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.compile_on_load import CompileOnLoad
from keras_bert3.models.training_precision import ChoosesTrainingPrecision
from keras_bert3.models.training_precision import check_precision_name
from keras_bert3.ops.sparse_cross_entropy import sparse_cross_entropy_with_hits
from keras_bert3.optimizers.build_before_first_step import build_optimizer_before_first_step
from keras_bert3.upstream.multi_worker_fit import MultiWorkerFit

MLM_WEIGHTS_EPSILON = 1e-5  # As google-research/bert: sum(loss * w) / (sum(w) + 1e-5).


@keras.saving.register_keras_serializable(package="keras_bert3")
class BertPretrainer(CompileOnLoad, ChoosesTrainingPrecision, MultiWorkerFit, keras.Model):
    """A `BertBackbone` with the masked-LM head and the next-sentence head.

    The MLM head predicts the original tokens at `mask_positions` through the tied token embedding matrix; the NSP head
    gives two logits from the pooled output (label 1 = B is a random segment, as in the original code). The loss is the
    weighted mean MLM cross-entropy over the masked positions plus the NSP cross-entropy. `fit` and `evaluate` report
    `loss`, `mlm_loss`, `mlm_accuracy`, and with NSP `nsp_loss`, `nsp_accuracy`.

    Args:
        nsp: bool. Train the next-sentence objective too.
        packed: bool. Rows hold several pairs (`data.pair_packing.pack_pairs`): input `pair_ids`
            (int32 `(batch, seq)`: 1, 2, ...; 0 for padding; `padding_mask` stays 0/1) keeps attention
            and positions within a pair, and NSP is predicted for each pair from its [CLS] at
            `nsp_positions` (int32 `(batch, pairs)`), with labels `(batch, pairs)` and sample weights
            `{"nsp": ...}` (0 for unused pair slots). The loss is that of the same pairs unpacked.

    Inputs: dict of int32 `(batch, seq)` `token_ids`, `segment_ids`, `padding_mask`, and int32
    `(batch, predictions)` `mask_positions`. Targets: `{"mlm": mask_ids (batch, predictions), "nsp":
    labels (batch,)}`; sample weights `{"mlm": mask_weights (batch, predictions)}` (0 for padded
    `mask_positions`). Outputs: `{"mlm": logits (batch, predictions, vocabulary), "nsp": (batch, 2)}`.

    Example:
    >>> pretrainer = BertPretrainer(BertBackbone.from_size("tiny", vocabulary_size=tokenizer.vocabulary_size()))
    >>> pretrainer.compile()  # The BERT recipe.
    >>> pretrainer.fit(keras_bert3.data.pretraining_dataset(files, tokenizer), steps_per_epoch=1000)
    """

    def __init__(self, backbone: BertBackbone, *, nsp: bool = True, packed: bool = False, **kwargs):
        # === Layers ===
        self.backbone = backbone
        self.masked_lm_head = BertMaskedLMHead.of_backbone(backbone)
        self.next_sentence_head = None
        if nsp:
            self.next_sentence_head = keras.layers.Dense(
                2,
                kernel_initializer=keras.initializers.TruncatedNormal(stddev=backbone.initializer_range),
                dtype=backbone.dtype_policy,
                name="next_sentence_head",
            )

        # === Functional graph ===
        names = ("token_ids", "segment_ids", "padding_mask", "mask_positions")
        names += (("pair_ids",) if packed else ()) + (("nsp_positions",) if packed and nsp else ())
        inputs = {name: keras.Input(shape=(None,), dtype="int32", name=name) for name in names}
        if packed:  # Attention and positions from `pair_ids` alone.
            sequence = backbone.packed_sequence_output(inputs["token_ids"], inputs["segment_ids"], inputs["pair_ids"])
        else:
            encoded = backbone({k: inputs[k] for k in ("token_ids", "segment_ids", "padding_mask")})
            sequence = encoded["sequence_output"]
        outputs = {"mlm": self.masked_lm_head(sequence, inputs["mask_positions"])}
        if nsp and packed:  # Each pair's [CLS] through the pooler: (batch, pairs, 2).
            first_tokens = ops.take_along_axis(sequence, inputs["nsp_positions"][:, :, None], axis=1)
            outputs["nsp"] = self.next_sentence_head(backbone.pooler(first_tokens))
        elif nsp:
            outputs["nsp"] = self.next_sentence_head(encoded["pooled_output"])
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        # The backbone's dtype policy, so that mixed_float16 gets loss scaling in compile().
        self.dtype_policy = backbone.dtype_policy

        # === Config ===
        self.nsp = nsp
        self.packed = packed

        # === Metrics ===
        self.mlm_loss_tracker = keras.metrics.Mean(name="mlm_loss")
        self.mlm_accuracy_tracker = keras.metrics.Mean(name="mlm_accuracy")
        self.nsp_loss_tracker = keras.metrics.Mean(name="nsp_loss") if nsp else None
        self.nsp_accuracy_tracker = keras.metrics.Mean(name="nsp_accuracy") if nsp else None

    def compile(
        self,
        optimizer=None,
        *,
        learning_rate: float = 1e-4,
        total_steps: int = 1_000_000,
        warmup_steps: int | None = None,
        weight_decay: float = 0.01,
        jit_compile="auto",
        precision: str = "auto",
        **kwargs,
    ):
        """Compiles with BERT's recipe.

        With no `optimizer`, builds `bert_optimizer` from the keywords (the paper's values by default); a given
        `optimizer` replaces only the optimizer. Passing `loss` or `metrics` is an error. `precision="auto"` trains a
        float32 model in the fastest safe precision for the device (`training_precision.auto_precision`, logged once);
        only the training step changes. `training_dtype_policy` says what was chosen; `"float32"`, `"mixed_bfloat16"` or
        `"mixed_float16"` (GPUs) ask for that precision. A model built under another policy keeps it.

        Example:
        >>> pretrainer.compile(learning_rate=5e-4, total_steps=10_000)
        """
        check_precision_name(precision)
        for name in ("loss", "metrics", "weighted_metrics", "loss_weights"):
            if kwargs.get(name) is not None:
                raise ValueError(
                    f"BertPretrainer computes its own losses and metrics; remove "
                    f"`{name}=` from compile(). Only the optimizer can be changed."
                )
        if optimizer is None:
            from keras_bert3.optimizers.bert_optimizer import bert_optimizer

            optimizer = bert_optimizer(
                learning_rate=learning_rate,
                total_steps=total_steps,
                warmup_steps=warmup_steps,
                weight_decay=weight_decay,
            )
        super().compile(optimizer=optimizer, jit_compile=jit_compile, **kwargs)
        enable_jax_compilation_cache()  # On JAX, at the first compile, not at import (see its module).
        self.choose_training_precision(precision, pretraining=True, jit_compile=jit_compile)

    @property
    def metrics(self):
        trackers = [self.mlm_loss_tracker, self.mlm_accuracy_tracker]
        if self.nsp:
            trackers += [self.nsp_loss_tracker, self.nsp_accuracy_tracker]
        return super().metrics + trackers

    def _check_targets(self, y, sample_weight):
        if not isinstance(y, dict) or "mlm" not in y:
            found = f" with keys {sorted(y)}" if isinstance(y, dict) else ""
            raise ValueError(
                "BertPretrainer needs targets {'mlm': mask_ids, 'nsp': labels} "
                "(as `keras_bert3.data.pretraining_dataset` yields), got "
                f"{type(y).__name__}{found}."
            )
        if self.nsp and "nsp" not in y:
            raise ValueError(
                "This BertPretrainer has nsp=True but the targets have no 'nsp' "
                "label: build the dataset with NSP on, or the pretrainer with nsp=False."
            )
        if not isinstance(sample_weight, dict) or "mlm" not in sample_weight:
            raise ValueError(
                "BertPretrainer needs sample weights {'mlm': mask_weights} "
                "(0 for padded mask positions), the third part of each element."
            )

    def _check_dataset(self, data):
        """Checks a dataset's element structure before anything is traced."""
        spec = getattr(data, "element_spec", None)
        if spec is None:
            return
        if not isinstance(spec, tuple) or len(spec) != 3:
            raise ValueError(
                "BertPretrainer datasets yield (x, y, sample_weight) triples, as "
                "`keras_bert3.data.pretraining_dataset` does; this one yields "
                f"{type(spec).__name__}{'' if not isinstance(spec, tuple) else f' of {len(spec)}'}."
            )
        inputs, targets, weights = spec
        missing = [name for name in self.input if not isinstance(inputs, dict) or name not in inputs]
        if missing:
            raise ValueError(
                f"The dataset's inputs lack {missing}; BertPretrainer needs "
                f"{list(self.input)} (mask_positions: the indices of the masked tokens)."
            )
        self._check_targets(targets, weights)

    def _checked(self, data):
        """`data` checked for its structure now, and a `tf.data.Dataset` for token ids past the
        embedding as each batch is read (`with_token_ids_checked`), before it is trained on."""
        self._check_dataset(data)
        from keras_bert3.data.token_id_check import with_token_ids_checked

        return with_token_ids_checked(data, self.backbone.vocabulary_size)

    def fit(self, x=None, *args, **kwargs):
        x = self._checked(x)
        build_optimizer_before_first_step(self)
        if hasattr(x, "element_spec") and len(args) < 8:  # A dataset shuffles in its own pipeline: Keras ignores
            kwargs.setdefault("shuffle", False)  # `shuffle` for it, and warns on its default True.
        return super().fit(x, *args, **kwargs)

    def evaluate(self, x=None, *args, **kwargs):
        return super().evaluate(self._checked(x), *args, **kwargs)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """MLM loss (weighted mean over masked positions) + NSP loss (mean). Under a TensorFlow strategy,
        this replica's share of the global-batch loss, so the summed gradients equal one device's."""
        self._check_targets(y, sample_weight)
        replicas = num_replicas_in_sync()  # Shares times replicas: the global value, for the trackers.
        mlm_logits = ops.cast(y_pred["mlm"], "float32")
        weights = ops.cast(sample_weight["mlm"], "float32")
        labels = ops.cast(y["mlm"], "int32")
        per_token, correct = sparse_cross_entropy_with_hits(labels, mlm_logits)
        total_weight = cross_replica_sum(ops.sum(weights)) + MLM_WEIGHTS_EPSILON
        mlm_loss = ops.sum(per_token * weights) / total_weight
        self.mlm_loss_tracker.update_state(mlm_loss * replicas)
        self.mlm_accuracy_tracker.update_state(ops.sum(correct * weights) / total_weight * replicas)
        loss = mlm_loss
        if self.nsp:
            # One label per row, or per pair of a packed row (weighted: 0 for unused pair slots).
            nsp_logits = ops.reshape(ops.cast(y_pred["nsp"], "float32"), (-1, 2))
            nsp_labels = ops.reshape(ops.cast(y["nsp"], "int32"), (-1,))
            nsp_weights = sample_weight.get("nsp")
            nsp_weights = (
                ops.ones_like(nsp_labels, "float32")
                if nsp_weights is None
                else ops.reshape(ops.cast(nsp_weights, "float32"), (-1,))
            )
            examples = cross_replica_sum(ops.sum(nsp_weights))
            nsp_losses = keras.losses.sparse_categorical_crossentropy(nsp_labels, nsp_logits, from_logits=True)
            nsp_loss = ops.sum(nsp_losses * nsp_weights) / examples
            nsp_correct = ops.cast(ops.equal(ops.argmax(nsp_logits, axis=-1), nsp_labels), "float32")
            self.nsp_loss_tracker.update_state(nsp_loss * replicas)
            self.nsp_accuracy_tracker.update_state(ops.sum(nsp_correct * nsp_weights) / examples * replicas)
            loss = loss + nsp_loss
        return loss

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        # The trackers were updated by compute_loss; report them all.
        return self.get_metrics_result()

    def get_config(self):
        return {
            **serialized(self, ("backbone",)),
            "nsp": self.nsp,
            "packed": self.packed,
            "name": self.name,
            "trainable": self.trainable,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**deserialized(config, ("backbone",)))

    @classmethod
    def from_preset(
        cls, preset: str, *, nsp: bool = True, packed: bool = False, **backbone_overrides
    ) -> "BertPretrainer":
        """A pretrainer on the backbone of `preset`, with its pretraining heads when the preset has them
        (a keras_bert3 pretrainer preset, or a Hugging Face `BertForPreTraining` / `BertForMaskedLM`
        checkpoint); otherwise the heads start from random weights.

        Example:
        >>> pretrainer = BertPretrainer.from_preset("path/to/bert-base-uncased")
        """
        from keras_bert3.presets.pretrainer_preset import load_pretrainer

        return load_pretrainer(preset, cls=cls, backbone_cls=BertBackbone, nsp=nsp, packed=packed, **backbone_overrides)

    def save_to_preset(self, preset_dir: str, tokenizer=None) -> None:
        """Writes the backbone (and `tokenizer`, if given) as a preset the task
        models load, plus the heads, so pretraining can continue from it."""
        from keras_bert3.presets.pretrainer_preset import save_pretrainer

        save_pretrainer(self, preset_dir, tokenizer=tokenizer)
