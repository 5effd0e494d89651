"""BertTask: what every fine-tuning task shares (Devlin et al. 2019, section 4:
a pretrained backbone, one added output layer, a short AdamW run with warmup).

A task subclass owns its head, its preprocessor and how texts become batches
(`_dataset`); this base gives it the working defaults of `compile`, a learning
rate schedule sized to the first `fit`, `fit`/`evaluate` on raw texts, loading
(`from_preset`, Hugging Face heads included), task presets (`save_to_preset`),
export dispatch and the Keras config.
"""

import contextlib
import dataclasses
import inspect
import math

import keras
import numpy as np

from keras_bert3.distribution.cross_replica import num_replicas_in_sync
from keras_bert3.distribution.devices import accelerator_type
from keras_bert3.distribution.jax_compilation_cache import enable_jax_compilation_cache
from keras_bert3.layers.nested_objects import deserialized
from keras_bert3.layers.nested_objects import serialized
from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.bert_backbone import check_vocabulary_sizes
from keras_bert3.models.compile_on_load import CompileOnLoad
from keras_bert3.models.task_inputs import check_task_input
from keras_bert3.models.training_precision import ChoosesTrainingPrecision
from keras_bert3.models.training_precision import check_precision_name
from keras_bert3.optimizers.build_before_first_step import build_optimizer_before_first_step
from keras_bert3.preprocessing.bert_text_preprocessor import INPUT_NAMES
from keras_bert3.preprocessing.bert_text_preprocessor import is_packed
from keras_bert3.preprocessing.fixed_shapes import check_length_buckets
from keras_bert3.preprocessing.fixed_shapes import default_length_buckets
from keras_bert3.preprocessing.fixed_shapes import fixed_shape_arrays
from keras_bert3.preprocessing.fixed_shapes import fixed_shape_batches
from keras_bert3.preprocessing.fixed_shapes import fixed_shape_specs
from keras_bert3.preprocessing.fixed_shapes import real_rows
from keras_bert3.preprocessing.fixed_shapes import row_weights
from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
from keras_bert3.models.train_step_precompile import PrecompileTrainSteps


@dataclasses.dataclass(frozen=True)
class HuggingFaceHead:
    """Where a task's dense head sits in a Hugging Face checkpoint.

    Example:
    >>> HuggingFaceHead("BertForSequenceClassification", prefix="classifier.", layer="output_dense")
    """

    architecture: str  # The checkpoint's class in config.json "architectures".
    prefix: str  # Its tensors: prefix + "weight" (units, hidden), prefix + "bias".
    layer: str  # Our `Dense` that takes them: an attribute of the task.


class BertTask(CompileOnLoad, ChoosesTrainingPrecision, keras.Model):
    """Base of `BertClassifier`, `BertTokenClassifier`, `BertQuestionAnswerer`.

    Subclasses build a functional graph on the backbone (`task_preprocessor`,
    `packed_inputs` and `dense_head` help), then call
    `super().__init__(inputs=..., outputs=..., **kwargs)` and set
    `self.backbone`, `self.preprocessor`. They declare:

    - `preprocessor_cls`: the class of their preprocessor;
    - `preset_settings`: the names of the settings a preset stores and
      `from_preset` takes, each an argument of the task's or the
      preprocessor's constructor (whose default it keeps);
    - `head_size_argument`: `(argument, unit)` such as
      `("num_classes", "classes")`, or None for a head of fixed size;
    - `huggingface_head`: a `HuggingFaceHead` that `from_preset` loads from
      a Hugging Face checkpoint of that architecture, or None;

    and define:

    - `head_layers`: the layers a task preset stores besides the backbone;
    - `default_loss()`, `default_metrics()`: what `compile()` uses for "auto";
    - `_dataset(x, y, sample_weight, batch_size=, shuffle=)`: a `tf.data`
      pipeline of packed batches for raw inputs (`batches` calls it);
    - `_packed_for_predict(x)` and `_predictions(outputs, examples)`: what
      `predict` does with raw inputs before and after running them (see
      `predict`), and `_joined_predictions(chunks)` if a chunk's
      predictions are not a list;
    - `saved_model_writer`: the name of its writer in `keras_bert3.export`
      (e.g. "export_text_classifier"), which `export` calls as
      `writer(task, filepath, verbose=, warmup=, jit_compile=)`: a SavedModel
      whose `serving_default` takes the task's raw inputs (with TF Serving
      warm-up records if `warmup`, see `write_warmup_requests`; the model
      compiled by XLA if `jit_compile`). A name, not the function: export
      sits a floor above models (tests/layout_test.py).

    A subclass that lacks one of these is refused when it is defined
    (`TypeError` naming what is missing).

    Example (a subclass):
    ```python
    class MyTask(BertTask):
        preprocessor_cls = keras_bert3.BertTextPreprocessor
        preset_settings = ("sequence_length",)
        saved_model_writer = "export_text_classifier"
        head_layers = property(lambda self: [self.output_dense])
        def _dataset(self, x, y=None, sample_weight=None, *, batch_size=None, shuffle=False): ...
        def _packed_for_predict(self, x): ...  # yield packed, examples
        def _predictions(self, outputs, examples): ...
    ```
    """

    preprocessor_cls = None
    preset_settings: tuple[str, ...] = ()
    head_size_argument: tuple[str, str] | None = None
    huggingface_head: HuggingFaceHead | None = None
    saved_model_writer: str | None = None  # A function of keras_bert3.export, by name.
    fine_tuned_settings: tuple[str, ...] = ()  # Settings a trained head depends on: a preset's must be kept.
    raw_inputs = "texts (a list, numpy array or tf.string tensor of strings)"  # For error messages.
    raw_dict_keys: tuple[str, ...] | None = None  # A dict of raw examples has these keys (else dicts are packed).
    takes_text_datasets = False  # Whether a tf.data.Dataset of raw texts is accepted (else only packed batches).
    per_token_outputs = True  # Outputs have a length axis (second); False for one output per example.
    loss_over_labelled_tokens = False  # The loss averages over labelled tokens (their labels mark empty rows).
    REQUIRED_HOOKS = (
        "preprocessor_cls",
        "head_layers",
        "_dataset",
        "_packed_for_predict",
        "_predictions",
        "saved_model_writer",
    )

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        missing = [name for name in BertTask.REQUIRED_HOOKS if getattr(cls, name, None) is None]
        if missing:
            raise TypeError(f"{cls.__name__} subclasses BertTask but does not define {', '.join(missing)}.")
        settings = {name: parameter.default for name, parameter in _constructor_parameters(cls).items()}
        unknown = [name for name in cls.preset_settings if name not in settings]
        if unknown:
            raise TypeError(
                f"{cls.__name__}.preset_settings names {', '.join(unknown)}, which neither "
                f"{cls.__name__} nor {cls.preprocessor_cls.__name__} takes."
            )

    def __init__(self, *, inputs, outputs, **kwargs):
        # Keras's functional constructor drops keywords it does not know, so a
        # misspelt or misplaced setting would otherwise be lost without a word.
        unknown = sorted(set(kwargs) - {"name", "trainable", "dtype"})
        if unknown:
            takes = sorted(
                name for name in _parameters(type(self)) if name not in ("backbone", "preprocessor", "tokenizer")
            )
            raise TypeError(
                f"{type(self).__name__} got unexpected keyword arguments {', '.join(unknown)}. Its settings are "
                f"{', '.join(takes)} (and Keras's name, trainable, dtype)."
            )
        # The epoch's mean loss over real rows, where batches have empty ones (`fixed_shapes`).
        self.real_rows_loss = keras.metrics.Mean(name="loss")
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

    @classmethod
    def task_preprocessor(cls, backbone, preprocessor=None, tokenizer=None, **settings):
        """`preprocessor`, or one of `preprocessor_cls` built from `tokenizer`
        and `settings`; checked to fit the backbone's vocabulary and length.
        A `preprocessor` given with a `tokenizer` or settings it lacks is refused."""
        if preprocessor is None:
            if tokenizer is None:
                raise ValueError(
                    f"{cls.__name__} needs the backbone's tokenizer (tokenizer=...) or a "
                    f"preprocessor; {cls.__name__}.from_preset(preset, ...) loads both."
                )
            preprocessor = cls.preprocessor_cls(tokenizer, name="preprocessor", **settings)
        else:
            check_preprocessor_agrees(cls, preprocessor, tokenizer, settings)
        check_backbone_fits(backbone, preprocessor)
        return preprocessor

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
        jit_compile="auto",
        precision: str = "auto",
        length_buckets="auto",
        **kwargs,
    ):
        """Compiles with the fine-tuning defaults, each replaceable.

        `optimizer="auto"` builds `bert_optimizer` (AdamW, weight decay off
        LayerNorm and biases, epsilon 1e-6, clipping at norm 1.0) with peak
        `learning_rate`, `warmup_ratio` of the steps for warmup and linear
        decay to zero at `total_steps` (None: the length of the next `fit`,
        epochs times batches). `loss="auto"` and `metrics="auto"`: the task's
        `default_loss()` and `default_metrics()`. `jit_compile="auto"` is
        Keras' choice (no XLA on TensorFlow CPUs: with one shape per padded
        length, compiling costs more than it saves).

        `precision="auto"` trains a float32 model in `mixed_bfloat16` on GPUs
        of compute capability 8.0 and later and on TPUs, in `mixed_float16`
        (loss scaling) on GPUs of 7.x, and in float32 on CPUs
        (`training_precision.auto_precision`); `training_dtype_policy` says
        what was chosen, `precision="float32"` keeps float32. Only the
        training step changes; `evaluate`, `predict` and exports keep the
        model's policy.

        `length_buckets`: where the steps are compiled by XLA (JAX; TensorFlow
        with `jit_compile=True`), the lengths that batches of raw texts are
        padded to, and every batch is filled to `batch_size` with empty rows
        that count nowhere (zero weight in losses and metrics): `fit`,
        `evaluate` and `predict` then compile one program per bucket at most.
        "auto" (`fixed_shapes.default_length_buckets`): on GPUs and TPUs the
        preprocessor's `sequence_length` alone (one program to compile), on
        CPUs three lengths, each half the next (`(32, 64, 128)` at 128); a
        list: those lengths (the largest at least `sequence_length`); None:
        one shape per padded length and a smaller last batch, as TensorFlow's
        graph runs.

        Example:
        >>> classifier.compile(learning_rate=2e-5, warmup_ratio=0.06)
        >>> classifier.compile(length_buckets=[32, 128])  # Two step programs at most.
        """
        from keras_bert3.optimizers.bert_optimizer import bert_optimizer
        from keras_bert3.optimizers.linear_warmup_decay import LinearWarmupLinearDecay

        check_precision_name(precision)
        sequence_length = self.preprocessor.sequence_length
        if length_buckets == "auto":
            length_buckets = default_length_buckets(sequence_length, accelerator_type())
        elif length_buckets is not None:
            length_buckets = check_length_buckets(length_buckets, sequence_length)
        self.length_buckets = length_buckets
        self._schedule_to_fit = None
        if optimizer == "auto":
            steps = total_steps or 1_000_000  # Resized by the first fit when None.
            schedule = LinearWarmupLinearDecay(learning_rate, int(warmup_ratio * steps), steps)
            optimizer = bert_optimizer(learning_rate=schedule, weight_decay=weight_decay)
            if total_steps is None:
                self._schedule_to_fit = (schedule, warmup_ratio)
        if loss == "auto":
            loss = self.default_loss()
        # The task's own metrics are weighted by `compute_metrics` (empty rows
        # count nowhere); metrics given here are Keras' as usual.
        self._metrics_weighted_by_rows = metrics == "auto" and kwargs.get("weighted_metrics") is None
        if self._metrics_weighted_by_rows:
            metrics, kwargs["weighted_metrics"] = None, self.default_metrics()
        super().compile(optimizer=optimizer, loss=loss, metrics=metrics, jit_compile=jit_compile, **kwargs)
        enable_jax_compilation_cache()  # On JAX, at the first compile, not at import (see its module).
        self.choose_training_precision(precision, pretraining=False, jit_compile=jit_compile)

    # === Losses and metrics that leave empty rows out ===
    # With `fixed_shapes`, a batch may end in empty rows (`fixed_shapes.py`):
    # the loss weighs them zero, the task's own metrics count real rows only,
    # and the reported loss is the mean over real rows, as without them (Keras'
    # own loss tracker would count every row of the batch).

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """Keras' loss, with empty rows weighted zero (`row_weights`); the
        same value as the batch without them."""
        if self.fixed_shapes and isinstance(x, dict) and "padding_mask" in x:
            sample_weight = row_weights(x, sample_weight, rescale=not self.loss_over_labelled_tokens)
        if self.loss_over_labelled_tokens and sample_weight is not None and len(sample_weight.shape) == 1:
            sample_weight = keras.ops.expand_dims(sample_weight, -1)  # (batch, 1): a weight per sentence.
        return super().compute_loss(x, y, y_pred, sample_weight, training=training)

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        """Keras' metrics; with `fixed_shapes`, the task's own (`metrics="auto"`)
        and the loss count real rows only."""
        fixed = self.fixed_shapes and isinstance(x, dict) and "padding_mask" in x
        if fixed:
            # The loss again (a cheap function of the logits), unscaled as Keras' tracker takes it.
            loss = self.compute_loss(x, y, y_pred, sample_weight, training=False) * num_replicas_in_sync()
            self.real_rows_loss.update_state(loss, sample_weight=keras.ops.sum(real_rows(x)))
        if getattr(self, "_metrics_weighted_by_rows", False):
            # The task's metrics count rows, as unweighted metrics do: real rows only.
            sample_weight = real_rows(x) if fixed else None
        return super().compute_metrics(x, y, y_pred, sample_weight)

    @property
    def metrics(self):
        # `real_rows_loss` comes after Keras' loss tracker, so its "loss" is the one reported.
        metrics = super().metrics
        return metrics if self.fixed_shapes else [m for m in metrics if m is not getattr(self, "real_rows_loss", None)]

    def leave_pooler_out(self) -> None:
        """For tasks on the token outputs: the pooler gets no gradient, so it is
        not trained (Hugging Face builds these tasks with `add_pooling_layer=False`)
        and Keras does not warn about its missing gradients. Its weights stay in
        the backbone, as loaded."""
        self.backbone.pooler.trainable = False

    # === Raw inputs in ===

    def fit(
        self,
        x=None,
        y=None,
        batch_size=None,
        epochs=1,
        *,
        sample_weight=None,
        validation_data=None,
        shuffle=True,
        **kwargs,
    ):
        """As `keras.Model.fit`; `x` may also be raw texts or a dataset of them."""
        check_task_input(self, x, "fit")
        build_optimizer_before_first_step(self)
        dataset = self.batches(x, y, sample_weight, batch_size=batch_size, shuffle=shuffle)
        if validation_data is not None and not is_dataset(validation_data):
            validation_data = self.batches(*validation_data, batch_size=batch_size) or validation_data
        elif validation_data is not None:
            validation_data = self.batches(validation_data, batch_size=batch_size) or validation_data
        if dataset is None:
            self._fit_schedule(epochs, kwargs.get("steps_per_epoch") or count_steps(x, batch_size))
            return super().fit(
                x,
                y,
                batch_size=batch_size,
                epochs=epochs,
                sample_weight=sample_weight,
                validation_data=validation_data,
                shuffle=shuffle,
                **kwargs,
            )
        dataset = with_known_length(dataset)
        if is_dataset(validation_data):
            validation_data = with_known_length(validation_data)
        self._fit_schedule(epochs, kwargs.get("steps_per_epoch") or count_steps(dataset))
        if self.fixed_shapes and len(self.length_buckets) > 1 and accelerator_type() != "cpu":
            # Every bucket's step compiled side by side, before the first step needs it (sooner
            # than one after another on a GPU's host; a CPU gains nothing).
            specs = fixed_shape_specs(dataset.element_spec, batch_size=batch_size or 32, buckets=self.length_buckets)
            kwargs["callbacks"] = [*(kwargs.get("callbacks") or []), PrecompileTrainSteps(specs)]
        return super().fit(dataset, epochs=epochs, validation_data=validation_data, shuffle=False, **kwargs)

    def batches(self, x, y=None, sample_weight=None, *, fill_rows: bool = True, **options):
        """The task's `tf.data` pipeline (`_dataset`) for raw inputs; None for
        packed inputs and datasets of packed batches, which Keras takes as they are.
        With fixed shapes, batches are padded to a length bucket and, if
        `fill_rows`, to `batch_size` rows (empty ones)."""
        if x is None or is_packed(x) or (is_dataset(x) and yields_packed(x)):
            return None
        dataset = self._dataset(x, y, sample_weight, **options)
        if self.fixed_shapes:
            rows = (options.get("batch_size") or 32) if fill_rows else None
            dataset = fixed_shape_batches(dataset, batch_size=rows, buckets=self.length_buckets)
        return dataset

    @property
    def fixed_shapes(self) -> bool:
        """Whether batches of raw inputs get fixed shapes (`length_buckets`): the steps are XLA-compiled."""
        return getattr(self, "length_buckets", None) is not None and self.jit_compile is True

    def _fit_schedule(self, epochs: int, steps_per_epoch: int | None) -> None:
        """Sets the default schedule's length to this fit's steps (before the first step)."""
        pending = getattr(self, "_schedule_to_fit", None)
        if pending is None or int(self.optimizer.iterations) > 0 or not steps_per_epoch:
            return
        schedule, warmup_ratio = pending
        schedule.total_steps = max(int(epochs * steps_per_epoch), 1)
        schedule.warmup_steps = int(warmup_ratio * schedule.total_steps)
        self._schedule_to_fit = None

    def evaluate(self, x=None, y=None, batch_size=None, *, sample_weight=None, **kwargs):
        """As `keras.Model.evaluate`; `x` may also be raw texts or a dataset of them."""
        check_task_input(self, x, "evaluate")
        dataset = self.batches(x, y, sample_weight, batch_size=batch_size)
        if dataset is None:
            return super().evaluate(x, y, batch_size=batch_size, sample_weight=sample_weight, **kwargs)
        return super().evaluate(with_known_length(dataset), **kwargs)

    # === Predict: raw inputs packed, run in length order, post-processed ===

    def predict(self, x, batch_size=None, **kwargs):
        """The task's predictions for `x`, in input order.

        Raw inputs (`raw_inputs`): the task packs them, each text tokenized
        once (`_packed_for_predict` yields chunks: numpy `(n, length)` inputs
        and what post-processing needs of their examples); each chunk runs
        shortest first in batches cut to their longest
        (`predict_in_length_order`); the task turns its outputs into
        predictions (`_predictions`; chunks joined by `_joined_predictions`).
        Packed inputs, and datasets of packed batches (or of texts, where
        `takes_text_datasets`: packed in order), give the model's outputs, as
        `keras.Model.predict`; the other keyword arguments (`verbose`) apply
        to those only.

        Example:
        >>> classifier.predict(["Some new text."])  # (1, num_classes) logits.
        >>> classifier.predict({"token_ids": ids, "segment_ids": segments, "padding_mask": mask}, verbose=0)
        """
        check_task_input(self, x, "predict")
        if is_packed(x) or is_dataset(x):
            # Rows are not filled: a prediction per text, whatever the dataset's batches.
            batches = self.batches(x, batch_size=batch_size, bucket=False, fill_rows=False)  # None unless texts.
            return super().predict(x if batches is None else batches, batch_size=batch_size, **kwargs)
        chunks = [
            self._predictions(self.predict_in_length_order(packed, batch_size), examples)
            for packed, examples in self._packed_for_predict(x)
        ]
        return self._joined_predictions(chunks)

    def _joined_predictions(self, chunks: list):
        """The predictions of `_packed_for_predict`'s chunks as one: their lists joined."""
        return [prediction for chunk in chunks for prediction in chunk]

    def predict_in_length_order(self, packed: dict, batch_size: int | None = None):
        """The model's outputs for packed inputs (numpy `(n, length)`), in input
        order: examples run shortest first, `batch_size` (32) at a time, each
        batch cut to its longest example (rounded up to the preprocessor's
        `pad_to_multiple_of`), so little compute goes to padding. Per-token
        outputs (`per_token_outputs`) come back padded to `length` with zeros.

        `predict` runs each chunk of packed raw inputs through this.
        """
        lengths = np.asarray(packed["padding_mask"]).sum(axis=1)
        width = np.shape(packed["token_ids"])[1]
        multiple = self.preprocessor.pad_to_multiple_of
        order = np.argsort(lengths, kind="stable")
        batches = []
        for start in range(0, len(order), batch_size or 32):
            rows = order[start : start + (batch_size or 32)]
            length = min(-(-max(int(lengths[rows].max()), 1) // multiple) * multiple, width)
            batch = {name: np.asarray(packed[name])[rows, :length] for name in INPUT_NAMES}
            if self.fixed_shapes:
                batch = fixed_shape_arrays(batch, batch_size=batch_size or 32, buckets=self.length_buckets)
            outputs = self.predict_on_batch(batch)
            if self.fixed_shapes:  # Back to this batch's rows and length.
                cut = (slice(len(rows)), slice(length)) if self.per_token_outputs else (slice(len(rows)),)
                outputs = keras.tree.map_structure(lambda o: np.asarray(o)[cut], outputs)
            if self.per_token_outputs:
                outputs = keras.tree.map_structure(lambda o: _pad_tokens(np.asarray(o), width), outputs)
            batches.append(outputs)
        if not batches:
            return None
        return keras.tree.map_structure(lambda *parts: _unsort(np.concatenate(parts), order), *batches)

    # === Presets and config ===

    def export(self, filepath, format="tf_saved_model", verbose=None, warmup=True, jit_compile=False, **kwargs):
        """Writes a SavedModel for TF Serving whose `serving_default` takes the
        task's raw inputs (strings; see `saved_model_writer`), with warm-up
        records in `assets.extra/` unless `warmup=False` (the server runs them
        at load with `--enable_model_warmup`: `keras_bert3.export.serving_warmup`).
        `jit_compile=True` (TensorFlow) compiles the model part with XLA:
        lower latency on CPU, but TF Serving then needs
        `--xla_cpu_compilation_enabled=true` and compiles each new (batch
        size, padded length) on its first request; the default export runs
        without XLA. On JAX the model is written (jax2tf) for the StableHLO
        version that the installed TensorFlow reads, so that TensorFlow and TF
        Serving of that release or later load it. Other formats go to Keras'
        `Model.export`.

        Example:
        >>> classifier.export("serving/1")  # TF Serving's default executor.
        >>> classifier.export("serving-xla/1", jit_compile=True)
        """
        if format == "onnx":  # A folder: model.onnx and tokenizer.json (keras_bert3.export.onnx_export).
            from keras_bert3.export.onnx_export import export_onnx

            return export_onnx(self, filepath, **kwargs)
        if format != "tf_saved_model":
            return super().export(filepath, format=format, verbose=verbose, **kwargs)
        import keras_bert3.export  # A floor up (tests/layout_test.py): the writers take a built task.

        write = getattr(keras_bert3.export, self.saved_model_writer)
        writing = contextlib.nullcontext()
        if keras.backend.backend() == "jax":  # JAX writes newer StableHLO than TensorFlow may read.
            from keras_bert3.upstream.stablehlo_target import written_for_installed_tensorflow

            writing = written_for_installed_tensorflow()
        with writing:
            return write(self, filepath, verbose=bool(verbose), warmup=warmup, jit_compile=jit_compile)

    def task_config(self) -> dict:
        """What a preset stores besides the backbone, tokenizer and head weights:
        the head's size and the `preset_settings`."""
        preprocessor_arguments = _parameters(self.preprocessor_cls)
        config = self._head_size_config()
        for name in self.preset_settings:
            config[name] = getattr(self.preprocessor if name in preprocessor_arguments else self, name)
        return config

    def _head_size_config(self) -> dict:
        """`{"num_classes": 4}` (the head size's argument and value), or {}."""
        if self.head_size_argument is None:
            return {}
        name = self.head_size_argument[0]
        return {name: getattr(self, name)}

    def save_to_preset(self, preset_dir: str) -> None:
        """Writes backbone, tokenizer, head and settings; `from_preset(preset_dir)` restores all."""
        from keras_bert3.presets.task_preset import save_task

        save_task(self, preset_dir, config=self.task_config(), head_layers=self.head_layers)

    @classmethod
    def from_preset(cls, preset: str, *head_size, **kwargs):
        """A task on `preset`: a backbone preset (any `BertBackbone.from_preset`
        source) with a new head, a preset written by `save_to_preset` with its
        fine-tuned head and settings, or a Hugging Face checkpoint of the
        task's architecture (`huggingface_head`) with its trained head.

        The head's size (`num_classes`, `num_labels`: positional or keyword)
        is needed for a new head; for a trained one it may be omitted, and
        must agree if given. Keywords in `preset_settings` (e.g.
        `sequence_length`, `dropout`) override the stored settings; the
        others go to `BertBackbone.from_preset` (e.g. `attention_dropout`).

        Example:
        >>> classifier = BertClassifier.from_preset("path/to/bert", num_classes=3, sequence_length=256)
        """
        from keras_bert3.presets.huggingface_checkpoint import assign
        from keras_bert3.presets.huggingface_checkpoint import read_huggingface_dense_head
        from keras_bert3.presets.preset_loader import resolve_preset
        from keras_bert3.presets.task_preset import load_head_weights
        from keras_bert3.presets.task_preset import read_task_config

        size_name, unit = cls.head_size_argument or (None, None)
        if head_size:
            if size_name is None or len(head_size) > 1 or size_name in kwargs:
                raise TypeError(
                    f"{cls.__name__}.from_preset takes the preset, then "
                    + (f"{size_name}, then " if size_name else "")
                    + f"keyword settings ({', '.join(cls.preset_settings)}); got {len(head_size)} more positional."
                )
            kwargs[size_name] = head_size[0]
        given_size = kwargs.pop(size_name, None) if size_name else None
        given = {name: kwargs.pop(name) for name in cls.preset_settings if kwargs.get(name) is not None}
        kwargs = {name: value for name, value in kwargs.items() if not (name in cls.preset_settings and value is None)}

        preset_dir = resolve_preset(preset)
        stored = read_task_config(preset_dir, cls) or {}
        for name in cls.fine_tuned_settings:
            if stored and name in given and given[name] != stored.get(name):
                raise ValueError(
                    f"The preset {preset!r} was fine-tuned with {name}={stored.get(name)}; its head does "
                    f"not fit {name}={given[name]}. Load the backbone alone (BertBackbone.from_preset) for a new head."
                )
        head = cls.huggingface_head
        hf_weights = (
            None if stored or head is None else read_huggingface_dense_head(preset_dir, head.architecture, head.prefix)
        )
        backbone = BertBackbone.from_preset(preset_dir, **kwargs)
        defaults = {name: parameter.default for name, parameter in _constructor_parameters(cls).items()}
        settings = {name: defaults[name] for name in cls.preset_settings}
        if "sequence_length" in settings:
            settings["sequence_length"] = min(settings["sequence_length"], backbone.max_sequence_length)
        settings.update({name: value for name, value in stored.items() if name in settings})
        settings.update(given)
        head_arguments = []
        if size_name:
            trained = stored.get(size_name) or (None if hf_weights is None else len(hf_weights[1]))
            head_arguments.append(head_size_of(preset, size_name, given_size, trained, cls.__name__, unit))
        preprocessor_arguments = _parameters(cls.preprocessor_cls)
        preprocessor = cls.preprocessor_cls(
            BertTokenizer.from_preset(preset_dir),
            name="preprocessor",
            **{name: value for name, value in settings.items() if name in preprocessor_arguments},
        )
        task = cls(
            backbone,
            *head_arguments,
            preprocessor=preprocessor,
            **{name: value for name, value in settings.items() if name not in preprocessor_arguments},
        )
        if stored:
            load_head_weights(preset_dir, task.head_layers)
        elif hf_weights is not None:
            dense = getattr(task, head.layer)
            assign(dense.kernel, hf_weights[0], head.prefix + "weight")
            assign(dense.bias, hf_weights[1], head.prefix + "bias")
        return task

    def get_config(self):
        """The backbone, the preprocessor, the head's size and the task's own settings."""
        preprocessor_arguments = _parameters(self.preprocessor_cls)
        own = [name for name in self.preset_settings if name not in preprocessor_arguments]
        return {
            **serialized(self, ("backbone", "preprocessor")),
            **self._head_size_config(),
            **{name: getattr(self, name) for name in own},
            "name": self.name,
            "trainable": self.trainable,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**deserialized(config, ("backbone", "preprocessor")))


def _pad_tokens(output, width: int):
    """A per-token output `(batch, length, ...)` padded with zeros to `(batch, width, ...)`."""
    padding = [(0, 0), (0, width - output.shape[1])] + [(0, 0)] * (output.ndim - 2)
    return np.pad(output, padding)


def _unsort(sorted_values, order):
    """The rows of `sorted_values` (row i is example `order[i]`) in example order."""
    values = np.empty_like(sorted_values)
    values[order] = sorted_values
    return values


def _parameters(cls) -> dict:
    """The keyword parameters of `cls`'s constructor, by name."""
    return {
        name: parameter
        for name, parameter in inspect.signature(cls.__init__).parameters.items()
        if parameter.kind in (parameter.KEYWORD_ONLY, parameter.POSITIONAL_OR_KEYWORD) and name != "self"
    }


def _constructor_parameters(task_cls) -> dict:
    """The parameters of a task's and of its preprocessor's constructors (the task's first)."""
    return {**_parameters(task_cls.preprocessor_cls), **_parameters(task_cls)}


def packed_inputs() -> dict:
    """The symbolic inputs of a task's functional graph: int32 `(batch, length)`
    `token_ids`, `segment_ids`, `padding_mask`."""
    from keras_bert3.preprocessing.bert_text_preprocessor import INPUT_NAMES

    return {name: keras.Input(shape=(None,), dtype="int32", name=name) for name in INPUT_NAMES}


def dense_head(backbone, units: int, name: str):
    """A task's output layer: `Dense(units)` initialised as the backbone's
    weights (truncated normal, `initializer_range`) in its dtype policy."""
    return keras.layers.Dense(
        units,
        kernel_initializer=keras.initializers.TruncatedNormal(stddev=backbone.initializer_range),
        dtype=backbone.dtype_policy,
        name=name,
    )


def head_size_of(preset: str, name: str, given: int | None, trained: int | None, task: str, unit: str) -> int:
    """The output size of a task loaded from `preset`: `given` (the
    `num_classes=` or `num_labels=` argument, `name`) or the `trained` head's,
    which must agree when both are there.

    Example:
    >>> head_size_of("path/to/bert", "num_labels", 9, None, "BertTokenClassifier", "labels")
    9
    """
    if trained and given is not None and int(given) != int(trained):
        raise ValueError(
            f"{name}={given}, but the preset {preset!r} is a {task} trained for {trained} {unit}. Omit "
            f"{name} to use its head, or load the backbone alone (BertBackbone.from_preset) for a new "
            f"head of {given} {unit}."
        )
    if not trained and given is None:
        raise ValueError(f"The preset {preset!r} has no {task} head: pass {name}=... for a new one.")
    return int(given) if given is not None else int(trained)


def check_preprocessor_agrees(task_cls, preprocessor, tokenizer, settings: dict) -> None:
    """Raises a clear error when a task is given a `preprocessor` together with
    a `tokenizer` or a setting other than its default that the preprocessor
    does not have: the preprocessor would win, and what was asked for would
    be lost without a word."""
    defaults = {name: parameter.default for name, parameter in _parameters(task_cls).items()}
    conflicting = [
        f"{name}={value!r} (the preprocessor's is {getattr(preprocessor, name)!r})"
        for name, value in settings.items()
        if value != defaults[name] and value != getattr(preprocessor, name)
    ]
    if tokenizer is not None and tokenizer is not preprocessor.tokenizer:
        conflicting.append("tokenizer= (the preprocessor has its own)")
    if conflicting:
        raise ValueError(
            f"{task_cls.__name__} got preprocessor= together with {', '.join(conflicting)}. "
            f"A preprocessor brings its own tokenizer and settings: pass the settings to "
            f"{type(preprocessor).__name__}(...) instead, or pass tokenizer= and the settings without a preprocessor."
        )


def check_backbone_fits(backbone, preprocessor) -> None:
    """Raises a clear error when the preprocessor's vocabulary or length does not fit the backbone."""
    check_vocabulary_sizes(backbone, preprocessor.tokenizer)
    if preprocessor.sequence_length > backbone.max_sequence_length:
        raise ValueError(
            f"sequence_length={preprocessor.sequence_length} exceeds the backbone's "
            f"{backbone.max_sequence_length} positions."
        )


def is_dataset(x) -> bool:
    import tensorflow as tf

    return isinstance(x, tf.data.Dataset)


def yields_packed(dataset) -> bool:
    """True when a dataset's elements (or their `x`) are packed BERT inputs."""
    spec = dataset.element_spec
    first = spec[0] if isinstance(spec, tuple) else spec
    return is_packed(first)


def with_known_length(dataset):
    """`dataset` with its number of batches declared, when tf.data cannot infer it.

    Batches built from texts in memory declare their number themselves; those
    from a dataset of texts of unknown length have a fixed number per epoch
    (the same examples whatever the shuffle), so it is counted once, by a pass
    over the pipeline; Keras then knows where an epoch ends instead of warning
    that the input "ran out of data".
    """
    import tensorflow as tf

    if int(dataset.cardinality()) != tf.data.UNKNOWN_CARDINALITY:
        return dataset
    return dataset.apply(tf.data.experimental.assert_cardinality(count_steps(dataset)))


def count_steps(data, batch_size=None) -> int | None:
    """Batches per epoch: a dataset's cardinality (counted when unknown), or from array length."""
    import tensorflow as tf

    if isinstance(data, tf.data.Dataset):
        cardinality = int(data.cardinality())
        if cardinality >= 0:
            return cardinality
        if cardinality == tf.data.INFINITE_CARDINALITY:
            return None
        return int(data.reduce(0, lambda count, _: count + 1))  # Bucketed text batches: cheap to count.
    if is_packed(data):
        return math.ceil(len(data["token_ids"]) / (batch_size or 32))
    return None
