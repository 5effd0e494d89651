"""BertTask: what every fine-tuning task shares (Devlin et al. 2019, section 4), as keras-hub's `Task`:
working `compile` defaults, raw inputs in `fit`, `evaluate` and `predict`, the row-weighted loss that
fixed batch shapes need, presets, export and config."""

import contextlib
import warnings

import keras

from keras_bert3.distribution.cross_replica import num_replicas_in_sync
from keras_bert3.distribution.devices import accelerator_type
from keras_bert3.distribution.jax_compilation_cache import enable_jax_compilation_cache
from keras_bert3.layers.nested_objects import deserialized
from keras_bert3.layers.nested_objects import serialized
from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.compile_on_load import CompileOnLoad
from keras_bert3.models.task_inputs import check_task_input
from keras_bert3.models.task_inputs import count_steps
from keras_bert3.models.task_inputs import is_dataset
from keras_bert3.models.task_inputs import with_known_length
from keras_bert3.models.task_inputs import yields_model_inputs
from keras_bert3.models.length_order import predict_in_length_order
from keras_bert3.models.task_parts import TaskSpec
from keras_bert3.models.task_parts import check_task_class
from keras_bert3.models.task_parts import check_task_keywords
from keras_bert3.models.train_step_precompile import PrecompileTrainSteps
from keras_bert3.models.training_precision import ChoosesTrainingPrecision
from keras_bert3.models.training_precision import check_precision_name
from keras_bert3.optimizers.build_before_first_step import build_optimizer_before_first_step
from keras_bert3.preprocessing.bert_text_preprocessor import is_model_inputs
from keras_bert3.preprocessing.fixed_shapes import FixedShapeBatches
from keras_bert3.preprocessing.fixed_shapes import task_length_buckets
from keras_bert3.preprocessing.fixed_shapes import real_rows
from keras_bert3.preprocessing.fixed_shapes import row_weights
from keras_bert3.presets.task_preset import keyword_parameters
from keras_bert3.upstream.compiled_state import loss_tracker

HOOKS = ("preprocessor_cls", "spec", "preprocess", "predict_examples")


class BertTask(CompileOnLoad, ChoosesTrainingPrecision, keras.Model):
    """Base of every task: `BertClassifier`, `BertRegressor`, `BertTokenClassifier`, `BertQuestionAnswerer`, ...

    A subclass builds its functional graph on the backbone (`task_parts`), calls `super().__init__(inputs=...,
    outputs=...)`, sets `self.backbone` and `self.preprocessor`, declares `preprocessor_cls` and `spec` (a
    `TaskSpec`), defines `default_loss()` and `default_metrics()` if not these, and two hooks:

    - `preprocess(x, y=None, sample_weight=None, *, batch_size, shuffle, keep_order)`: a `tf.data`
      pipeline of batches of model inputs for raw inputs;
    - `predict_examples(x, run)`: predictions for raw inputs, where `run(model_inputs)` gives the
      model's outputs for numpy model inputs.
    A subclass that lacks one of these is refused when it is defined.
    """

    preprocessor_cls = None
    spec: TaskSpec | None = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "spec" in cls.__dict__ and cls.spec is None:
            return  # A base of tasks (`PooledTextTask`): its subclasses declare their spec and are checked.
        check_task_class(cls, HOOKS)

    def __init__(self, *, inputs, outputs, **kwargs):
        check_task_keywords(type(self), kwargs)  # Keras's functional constructor would drop unknown ones.
        self.real_rows_loss = keras.metrics.Mean(name="loss")  # The reported loss: the mean over real rows.
        self.length_buckets = None  # Set by `compile`.
        self.row_counted_metrics = False  # The task's own metrics (`metrics="auto"`) count real rows.
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

    def leave_pooler_out(self) -> None:
        """For tasks on the token outputs: the pooler is frozen (Hugging Face: `add_pooling_layer=False`)."""
        self.backbone.pooler.trainable = False

    # === Compile: the fine-tuning recipe ===

    def default_loss(self):
        return keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def default_metrics(self):
        return [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]

    def compile(
        self,
        optimizer="auto",
        loss="auto",
        metrics="auto",
        *,
        learning_rate: float = 5e-5,
        warmup_ratio: float = 0.1,
        weight_decay: float = 0.01,
        total_steps: int | None = None,
        warmup_steps: int | None = None,
        schedule: str = "linear",
        gradient_accumulation_steps: int = 1,
        label_smoothing: float = 0.0,
        jit_compile="auto",
        precision: str = "auto",
        length_buckets="auto",
        **kwargs,
    ):
        """Compiles with the fine-tuning defaults, each replaceable (docs/tasks.md).

        `optimizer="auto"`: `bert_optimizer` (AdamW) at peak `learning_rate`, `warmup_steps` or `warmup_ratio` of the
        steps for warmup, then `schedule` ("linear" to zero, "cosine", "constant") to `total_steps` (optimizer updates;
        None: the next `fit`'s epochs times batches), updating every `gradient_accumulation_steps` batches.
        `loss`, `metrics` "auto": `default_loss()` (with `label_smoothing`), `default_metrics()`.
        `precision`: see `training_precision`.
        `length_buckets`: where the steps are XLA-compiled, the lengths batches of raw inputs are padded
        to, filled with empty rows that count nowhere (`fixed_shapes.task_length_buckets`; None: as they come).

        Example:
        >>> classifier.compile(learning_rate=2e-5, warmup_ratio=0.06)
        """
        from keras_bert3.optimizers.bert_optimizer import bert_optimizer
        from keras_bert3.models.label_smoothing import smoothed
        from keras_bert3.optimizers.linear_warmup_decay import LinearWarmupLinearDecay

        check_precision_name(precision)
        self.length_buckets = task_length_buckets(length_buckets, self.preprocessor.sequence_length)
        if optimizer == "auto":  # total_steps None: sized by the first fit (`size_schedule_to_fit`).
            rates = LinearWarmupLinearDecay.for_fine_tuning(
                learning_rate,
                warmup_ratio,
                total_steps,
                warmup_steps=warmup_steps,
                decay=schedule,
                steps_per_update=gradient_accumulation_steps,
            )
            optimizer = bert_optimizer(
                learning_rate=rates, weight_decay=weight_decay, gradient_accumulation_steps=gradient_accumulation_steps
            )
        # The task's own metrics count real rows (`compute_metrics`); metrics given here are Keras' as usual.
        self.row_counted_metrics = metrics == "auto" and kwargs.get("weighted_metrics") is None
        if self.row_counted_metrics:
            metrics, kwargs["weighted_metrics"] = None, self.default_metrics()
        loss = smoothed(self.default_loss(), label_smoothing) if loss == "auto" else loss
        super().compile(optimizer=optimizer, loss=loss, metrics=metrics, jit_compile=jit_compile, **kwargs)
        enable_jax_compilation_cache()  # On JAX, at the first compile, not at import (see its module).
        self.choose_training_precision(precision, pretraining=False, jit_compile=jit_compile)

    # === Losses and metrics over real rows: a batch's empty rows (`fixed_shapes`) count nowhere ===

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """Keras' loss with empty rows weighted zero (`row_weights`): the batch's value without them."""
        sample_weight = row_weights(x, sample_weight, rescale=not self.spec.loss_over_labelled_tokens)
        if self.spec.loss_over_labelled_tokens and len(sample_weight.shape) == 1:
            sample_weight = keras.ops.expand_dims(sample_weight, -1)  # (batch, 1): a weight per sentence.
        return super().compute_loss(x, y, y_pred, sample_weight, training=training)

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        """Keras' metrics; the loss reported and the task's own metrics count real rows only."""
        # The loss again (a cheap function of the logits), unscaled as Keras' tracker takes it.
        loss = self.compute_loss(x, y, y_pred, sample_weight, training=False) * num_replicas_in_sync()
        rows = real_rows(x)
        self.real_rows_loss.update_state(loss, sample_weight=keras.ops.sum(rows))
        return super().compute_metrics(x, y, y_pred, rows if self.row_counted_metrics else sample_weight)

    @property
    def metrics(self):
        # `real_rows_loss` in the place of Keras' loss tracker (which counts every row of a batch).
        metrics = [metric for metric in super().metrics if metric is not self.real_rows_loss]
        return [self.real_rows_loss if metric is loss_tracker(self) else metric for metric in metrics]

    @property
    def head_layers(self) -> list:
        """The task's own layers with weights, which a preset stores besides the backbone's."""
        backbone_layers = {id(layer) for layer in [self.backbone, *self.backbone.layers]}
        return [layer for layer in self.layers if layer.weights and id(layer) not in backbone_layers]

    # === Raw inputs in: one pipeline (`preprocess`), one batch shaping (`batch_shapes`) ===

    @property
    def batch_shapes(self) -> FixedShapeBatches:
        """Batches fixed to `length_buckets` where the steps are XLA-compiled, else as they come."""
        buckets = self.length_buckets if self.jit_compile is True else None
        return FixedShapeBatches(buckets, per_token_targets=self.spec.per_token_outputs)

    def batches(self, x, y=None, sample_weight=None, *, batch_size=None, fill_rows=True, **options):
        """The task's `preprocess` pipeline for raw inputs, shaped by `batch_shapes` (rows filled to
        `batch_size` if `fill_rows`); None for model inputs, which Keras takes as they are."""
        if x is None or is_model_inputs(x) or (is_dataset(x) and yields_model_inputs(x)):
            return None
        dataset = self.preprocess(x, y, sample_weight, batch_size=batch_size or 32, **options)
        return self.batch_shapes.dataset(dataset, batch_size=(batch_size or 32) if fill_rows else None)

    def fit(self, x=None, y=None, batch_size=None, epochs=1, *, validation_data=None, shuffle=True, **kwargs):
        """As `keras.Model.fit`; `x` and `validation_data` may also be raw inputs or a dataset of texts.
        A schedule of `compile(total_steps=None)` takes its length from this fit, before the first step."""
        from keras_bert3.optimizers.linear_warmup_decay import size_schedule_to_fit

        check_task_input(self, x, "fit")
        build_optimizer_before_first_step(self)
        sample_weight = kwargs.pop("sample_weight", None)
        dataset = self.batches(x, y, sample_weight, batch_size=batch_size, shuffle=shuffle)
        if validation_data is not None:
            parts = validation_data if isinstance(validation_data, tuple) else (validation_data,)
            validation_data = self.batches(*parts, batch_size=batch_size) or validation_data
            validation_data = with_known_length(validation_data) if is_dataset(validation_data) else validation_data
        if dataset is None:  # Model inputs, as Keras takes them.
            data = dict(x=x, y=y, batch_size=batch_size, sample_weight=sample_weight, shuffle=shuffle)
        else:
            data = dict(x=with_known_length(dataset), shuffle=False)
            specs = self.batch_shapes.step_specs(dataset.element_spec, batch_size=batch_size or 32)
            if len(specs) > 1 and accelerator_type() != "cpu":  # Compiled side by side before the first step.
                kwargs["callbacks"] = [*(kwargs.get("callbacks") or []), PrecompileTrainSteps(specs)]
        steps = kwargs.get("steps_per_epoch") or count_steps(data["x"], batch_size)
        size_schedule_to_fit(self.optimizer, epochs, steps)
        return super().fit(**data, epochs=epochs, validation_data=validation_data, **kwargs)

    def evaluate(self, x=None, y=None, batch_size=None, *, sample_weight=None, **kwargs):
        """As `keras.Model.evaluate`; `x` may also be raw inputs or a dataset of texts."""
        check_task_input(self, x, "evaluate")
        dataset = self.batches(x, y, sample_weight, batch_size=batch_size)
        if dataset is None:
            return super().evaluate(x, y, batch_size=batch_size, sample_weight=sample_weight, **kwargs)
        return super().evaluate(with_known_length(dataset), **kwargs)

    # === Predict: raw inputs tokenized, run in length order, turned into the task's predictions ===

    def predict(self, x, batch_size=None, **kwargs):
        """The task's predictions for raw inputs (`predict_examples`), in input order; for model inputs
        or a dataset, the model's outputs, as `keras.Model.predict` (which takes the other keywords).

        Example:
        >>> classifier.predict(["Some new text."])  # (1, num_classes) logits.
        """
        check_task_input(self, x, "predict")
        if is_model_inputs(x) or is_dataset(x):  # Rows not filled: a prediction per example.
            batches = self.batches(x, batch_size=batch_size, keep_order=True, fill_rows=False)
            return super().predict(x if batches is None else batches, batch_size=batch_size, **kwargs)
        options = dict(batch_size=batch_size or 32, shapes=self.batch_shapes, per_token=self.spec.per_token_outputs)
        return self.predict_examples(x, lambda model_inputs: predict_in_length_order(self, model_inputs, **options))

    def make_predict_function(self, force=False):
        """Keras's; on TensorFlow called through one shape-generic graph (`ShapeGenericPredict`), so that a batch gives
        the same bits whatever the process predicted before."""
        super().make_predict_function(force)  # Keras's sets `predict_function` (and returns it only once made).
        function = self.predict_function
        if keras.backend.backend() == "tensorflow" and not self.run_eagerly and hasattr(function, "python_function"):
            from keras_bert3.upstream.shape_generic_predict import ShapeGenericPredict

            self.predict_function = ShapeGenericPredict(function)
        return self.predict_function

    # === Export, presets and config ===

    def export(self, filepath, format="tf_saved_model", verbose=None, warmup=True, jit_compile=False, **kwargs):
        """Writes a SavedModel for TF Serving whose `serving_default` takes the task's raw inputs
        (`spec.saved_model_writer`; docs/serving.md), with warm-up records unless `warmup=False`;
        `jit_compile=True` (TensorFlow) compiles the model part with XLA. `format="onnx"` writes a folder
        (`export.onnx_export`); other formats go to `Model.export`.

        Example:
        >>> classifier.export("serving/1")  # TF Serving's default executor.
        """
        if format == "onnx":
            from keras_bert3.export.onnx_export import export_onnx

            return export_onnx(self, filepath, **kwargs)
        if format != "tf_saved_model":
            return super().export(filepath, format=format, verbose=verbose, **kwargs)
        import keras_bert3.export  # A floor up (tests/layout_test.py): the writers take a built task.

        writer = self.spec.saved_model_writer
        write = writer if callable(writer) else getattr(keras_bert3.export, writer)
        writing = contextlib.nullcontext()
        if keras.backend.backend() == "jax":  # JAX writes newer StableHLO than TensorFlow may read.
            from keras_bert3.upstream.stablehlo_target import written_for_installed_tensorflow

            writing = written_for_installed_tensorflow()
        with writing:
            return write(self, filepath, verbose=bool(verbose), warmup=warmup, jit_compile=jit_compile)

    def serving_outputs(self, outputs) -> dict:
        """What a SavedModel of `export_text_classifier` serves for the model's float32 `outputs` (one
        row per text): `{"outputs": outputs}` here; a task that reuses that writer names its own."""
        return {"outputs": outputs}

    def write_saved_model(self, filepath, verbose: bool = False, warmup: bool = True, jit_compile: bool = False):
        """Deprecated: `export(filepath)`, which this calls, writes the same SavedModel."""
        warnings.warn(
            f"{type(self).__name__}.write_saved_model is deprecated and will be removed in the next release: "
            "use export(filepath, warmup=..., jit_compile=...).",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.export(filepath, verbose=verbose, warmup=warmup, jit_compile=jit_compile)

    def task_config(self) -> dict:
        """What a preset stores besides the weights and tokenizer: head size and `spec.preset_settings`."""
        in_preprocessor = keyword_parameters(self.preprocessor_cls)
        names = list(self.spec.head_size_argument or ())[:1] + list(self.spec.preset_settings)
        return {name: getattr(self.preprocessor if name in in_preprocessor else self, name) for name in names}

    def save_to_preset(self, preset_dir: str) -> None:
        """Writes backbone, tokenizer, head and settings; `from_preset(preset_dir)` restores all."""
        from keras_bert3.presets.task_preset import save_task

        save_task(self, preset_dir, config=self.task_config(), head_layers=self.head_layers)

    @classmethod
    def from_preset(cls, preset: str, *head_size, **kwargs):
        """A task on `preset`: a backbone preset with a new head, a preset of `save_to_preset` with its
        fine-tuned head and settings, or a Hugging Face checkpoint of the task's architecture with its
        trained head. The head's size (`num_classes`, `num_labels`: positional or keyword) is needed for
        a new head and must agree with a trained one. Keywords in `spec.preset_settings` override the
        stored settings; the others go to `BertBackbone.from_preset` (e.g. `attention_dropout`).

        Example:
        >>> classifier = BertClassifier.from_preset("path/to/bert", num_classes=3, sequence_length=256)
        """
        from keras_bert3.presets.task_preset import load_task

        return load_task(preset, *head_size, cls=cls, backbone_cls=BertBackbone, **kwargs)

    def get_config(self):
        """The backbone, the preprocessor, the head's size and the task's own settings."""
        in_preprocessor = keyword_parameters(self.preprocessor_cls)
        return {
            **serialized(self, ("backbone", "preprocessor")),
            **{name: value for name, value in self.task_config().items() if name not in in_preprocessor},
            "name": self.name,
            "trainable": self.trainable,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**deserialized(config, ("backbone", "preprocessor")))
