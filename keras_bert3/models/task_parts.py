"""The parts a BERT task is built from: what it declares (`TaskSpec`, `HuggingFaceHead`), its
symbolic inputs, its dense output layer, and its checked preprocessor (`task_preprocessor`)."""

import dataclasses
from collections.abc import Callable

import keras

from keras_bert3.models.bert_backbone import check_vocabulary_sizes
from keras_bert3.preprocessing.bert_text_preprocessor import INPUT_NAMES
from keras_bert3.presets.task_preset import keyword_parameters
from keras_bert3.presets.task_preset import task_settings


@dataclasses.dataclass(frozen=True)
class HuggingFaceHead:
    """Where a task's dense head sits in a Hugging Face checkpoint."""

    architecture: str  # The checkpoint's class in config.json "architectures".
    prefix: str  # Its tensors: prefix + "weight" (units, hidden), prefix + "bias".
    layer: str  # Our `Dense` that takes them: an attribute of the task.


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """What a `BertTask` subclass declares about its inputs, outputs and presets."""

    # A function of `keras_bert3.export` by name, or any: `writer(task, filepath, verbose=, warmup=, jit_compile=)`.
    saved_model_writer: "str | Callable"
    raw_inputs: str  # What `fit`, `evaluate` and `predict` take besides model inputs, for error messages.
    # The settings a preset stores and `from_preset` takes: arguments of the task's or its preprocessor's constructor.
    preset_settings: tuple[str, ...] = ()
    fine_tuned_settings: tuple[str, ...] = ()  # Settings a trained head depends on: a preset's must be kept.
    head_size_argument: tuple[str, str] | None = None  # e.g. ("num_classes", "classes"); None: a fixed size.
    huggingface_head: HuggingFaceHead | None = None  # The trained head `from_preset` loads from a checkpoint.
    raw_dict_keys: tuple[str, ...] | None = None  # A dict of raw examples has these keys (else dicts are model inputs).
    takes_text_datasets: bool = False  # A tf.data.Dataset of raw texts is accepted (else only model inputs).
    per_token_outputs: bool = True  # Outputs have a length axis (second); False for one output per example.
    inputs_per_choice: bool = False  # Model inputs are `(batch, choices, length)`: each example several choices.
    loss_over_labelled_tokens: bool = False  # The loss averages over labelled tokens (their labels mark empty rows).
    # ONNX nodes after the encoder: a function of `export.onnx_graph` by name, or any function,
    # called as `head(graph, task, weights, sequence)` -> {output name: (node, shape)}.
    onnx_head: "str | Callable | None" = None
    # The strings in front of its ONNX model: a function of `export.onnx_front_ends` by name ("texts": a text or a
    # pair; "words", "question_context", "context_choices"), "module:function", or any such function.
    strings_front_end: "str | Callable" = "texts"
    # What the commands (`finetune`, `evaluate`, `predict`) do with it: "module:Class" of its
    # `keras_bert3.jobs.task_job.TaskJob` subclass, or the class. None: the commands do not run it.
    job: "str | type | None" = None
    command_name: str | None = (
        None  # Its `--task` name; None: "module:Class" of the task (`task_preset.task_identity`).
    )


def model_inputs(*, choices: bool = False) -> dict:
    """The symbolic inputs of a task's functional graph: int32 `(batch, length)` `token_ids`, `segment_ids`,
    `padding_mask`; `(batch, choices, length)` with `choices`."""
    shape = (None, None) if choices else (None,)
    return {name: keras.Input(shape=shape, dtype="int32", name=name) for name in INPUT_NAMES}


def dense_head(backbone, units: int, name: str):
    """A task's output layer: `Dense(units)` initialised as the backbone's
    weights (truncated normal, `initializer_range`) in its dtype policy."""
    return keras.layers.Dense(
        units,
        kernel_initializer=keras.initializers.TruncatedNormal(stddev=backbone.initializer_range),
        dtype=backbone.dtype_policy,
        name=name,
    )


def check_preprocessor_agrees(task_cls, preprocessor, tokenizer, settings: dict) -> None:
    """Raises when a task is given a `preprocessor` together with a `tokenizer` or a non-default
    setting the preprocessor does not have (it would be silently ignored)."""
    defaults = {name: parameter.default for name, parameter in keyword_parameters(task_cls).items()}
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


def task_preprocessor(task_cls, backbone, preprocessor=None, tokenizer=None, **settings):
    """`preprocessor`, or a `task_cls.preprocessor_cls` built from `tokenizer` and `settings`; checked
    to fit the backbone (`check_preprocessor_agrees`, `check_backbone_fits`)."""
    if preprocessor is None:
        if tokenizer is None:
            raise ValueError(
                f"{task_cls.__name__} needs the backbone's tokenizer (tokenizer=...) or a "
                f"preprocessor; {task_cls.__name__}.from_preset(preset, ...) loads both."
            )
        preprocessor = task_cls.preprocessor_cls(tokenizer, name="preprocessor", **settings)
    else:
        check_preprocessor_agrees(task_cls, preprocessor, tokenizer, settings)
    check_backbone_fits(backbone, preprocessor)
    return preprocessor


def check_task_class(task_cls, hooks: tuple[str, ...]) -> None:
    """Refuses (TypeError) a task class that lacks one of `hooks`, or whose
    `spec.preset_settings` names a setting neither constructor takes."""
    missing = [name for name in hooks if getattr(task_cls, name, None) is None]
    if missing:
        raise TypeError(f"{task_cls.__name__} subclasses BertTask but does not define {', '.join(missing)}.")
    unknown = [name for name in task_cls.spec.preset_settings if name not in task_settings(task_cls)]
    if unknown:
        raise TypeError(
            f"{task_cls.__name__}.spec.preset_settings names {', '.join(unknown)}, which neither "
            f"{task_cls.__name__} nor {task_cls.preprocessor_cls.__name__} takes."
        )


def check_task_keywords(task_cls, kwargs: dict) -> None:
    """Refuses (TypeError) keywords a task's constructor passed on that Keras's
    functional constructor does not take: it would drop them without a word."""
    unknown = sorted(set(kwargs) - {"name", "trainable", "dtype"})
    if unknown:
        takes = sorted(set(keyword_parameters(task_cls)) - {"backbone", "preprocessor", "tokenizer"})
        raise TypeError(
            f"{task_cls.__name__} got unexpected keyword arguments {', '.join(unknown)}. Its settings are "
            f"{', '.join(takes)} (and Keras's name, trainable, dtype)."
        )
