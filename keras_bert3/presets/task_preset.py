"""Task presets: a backbone preset plus `task.json` (the task's class and config) and
`task_head.weights.h5` (the head's weights by path); and `load_task`, behind `from_preset`."""

import inspect
import os

from keras_bert3.files.weight_files import read_arrays
from keras_bert3.files.weight_files import write_arrays
from keras_bert3.files.write_failed import write_failures_named
from keras_bert3.presets.huggingface_checkpoint import assign
from keras_bert3.presets.huggingface_checkpoint import read_huggingface_dense_head
from keras_bert3.presets.preset_loader import resolve_preset
from keras_bert3.presets.preset_format import read_json
from keras_bert3.presets.preset_format import write_json
from keras_bert3.presets.preset_format import write_metadata
from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer

TASK_CONFIG_FILE = "task.json"
TASK_HEAD_WEIGHTS_FILE = "task_head.weights.h5"


def head_variables(head_layers) -> dict:
    """The variables of `head_layers`, by path (e.g. "logits/kernel"); not those a head only uses (a masked-LM
    head's tied token embedding, the backbone's)."""
    return {v.path: v for layer in head_layers for v in layer.weights if v.path.startswith(layer.name + "/")}


def save_task(task, preset_dir: str, *, config: dict, head_layers) -> None:
    """Writes the backbone, the tokenizer, `config` and the head's weights."""
    with write_failures_named(preset_dir, "the preset"):
        task.backbone.save_to_preset(preset_dir)
        task.preprocessor.tokenizer.save_to_preset(preset_dir)
        stored = {"class_name": type(task).__name__, "registered_name": registered_name(type(task)), "config": config}
        stored |= task_identity(type(task))  # The commands find the task (and import its module) by these.
        write_json(os.path.join(preset_dir, TASK_CONFIG_FILE), stored)
        variables = head_variables(head_layers)
        write_arrays(
            os.path.join(preset_dir, TASK_HEAD_WEIGHTS_FILE),
            {path: variable.numpy() for path, variable in variables.items()},
            what="the task head's weights",
        )
        write_metadata(preset_dir, task=type(task).__name__, task_head=sorted(variables))


def task_path(task_cls) -> str:
    """`module:Class` of a task class: what `--task` takes for any task, and what its presets and exports name."""
    return f"{task_cls.__module__}:{task_cls.__qualname__}"


def task_identity(task_cls) -> dict:
    """What a preset's task config and an export's `TASK_FILE` say of the task: its `--task` name, its class and
    its job's class (`TaskSpec.job`: what the commands do with it; None where it declares none)."""
    job = task_cls.spec.job
    return {
        "task": task_cls.spec.command_name or task_path(task_cls),
        "class": task_path(task_cls),
        "job": job if job is None or isinstance(job, str) else task_path(job),
    }


TASK_FILE = "keras_bert3_task.json"  # In an export's folder: `task_identity` of the task it serves.


def write_task_file(folder: str, task) -> None:
    """Writes `TASK_FILE` of `task` (a task model) in the export folder `folder`."""
    write_json(os.path.join(folder, TASK_FILE), task_identity(type(task)))


def registered_name(task_cls) -> str:
    """The name Keras registered `task_cls` under (e.g. "keras_bert3>BertClassifier")."""
    import keras

    return keras.saving.get_registered_name(task_cls)


def stored_task_class(preset_dir: str):
    """The registered task class a fine-tuned preset names (older ones: by class name), or None."""
    import keras

    stored = read_json(os.path.join(preset_dir, TASK_CONFIG_FILE))
    name = stored.get("registered_name") or f"keras_bert3>{stored.get('class_name')}"
    return keras.saving.get_registered_object(name)


def read_task_config(preset_dir: str, cls) -> dict | None:
    """The stored task config of a fine-tuned preset, or None for a backbone preset."""
    path = os.path.join(preset_dir, TASK_CONFIG_FILE)
    if not os.path.isfile(path):
        return None
    stored = read_json(path)
    if stored.get("class_name") != cls.__name__:
        raise ValueError(
            f"{path} holds a {stored.get('class_name')}, not a {cls.__name__}: load it "
            f"with keras_bert3.{stored.get('class_name')}.from_preset, or load only its "
            "backbone with BertBackbone.from_preset."
        )
    return stored["config"]


def load_head_weights(preset_dir: str, head_layers) -> None:
    """Assigns the stored head weights to `head_layers` (already built)."""
    path = os.path.join(preset_dir, TASK_HEAD_WEIGHTS_FILE)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"{preset_dir} has a {TASK_CONFIG_FILE} but no {TASK_HEAD_WEIGHTS_FILE}: the "
            "head's weights are missing. Copy the whole directory written by save_to_preset."
        )
    stored = read_arrays(path)
    for name, variable in head_variables(head_layers).items():
        if name not in stored:
            raise ValueError(f"{path} has no weights for {name!r} (it has {sorted(stored)}).")
        assign(variable, stored[name], f"{TASK_HEAD_WEIGHTS_FILE}:{name}")


def keyword_parameters(cls) -> dict:
    """The keyword parameters of `cls`'s constructor, by name."""
    return {
        name: parameter
        for name, parameter in inspect.signature(cls.__init__).parameters.items()
        if parameter.kind in (parameter.KEYWORD_ONLY, parameter.POSITIONAL_OR_KEYWORD) and name != "self"
    }


def task_settings(task_cls) -> dict:
    """The defaults of a task's and of its preprocessor's constructor parameters (the task's first)."""
    parameters = {**keyword_parameters(task_cls.preprocessor_cls), **keyword_parameters(task_cls)}
    return {name: parameter.default for name, parameter in parameters.items()}


def load_task(preset: str, *head_size, cls, backbone_cls, **kwargs):
    """A `BertTask` subclass `cls` loaded from `preset`: a new head on a backbone, a task
    preset's fine-tuned head, or a Hugging Face head (see `BertTask.from_preset`)."""
    spec = cls.spec
    size_name, unit = spec.head_size_argument or (None, None)
    if head_size:
        if size_name is None or len(head_size) > 1 or size_name in kwargs:
            raise TypeError(
                f"{cls.__name__}.from_preset takes the preset, then "
                + (f"{size_name}, then " if size_name else "")
                + f"keyword settings ({', '.join(spec.preset_settings)}); got {len(head_size)} more positional."
            )
        kwargs[size_name] = head_size[0]
    given_size = kwargs.pop(size_name, None) if size_name else None
    given = {name: kwargs.pop(name) for name in spec.preset_settings if kwargs.get(name) is not None}
    kwargs = {name: value for name, value in kwargs.items() if not (name in spec.preset_settings and value is None)}

    preset_dir = resolve_preset(preset)
    stored = read_task_config(preset_dir, cls) or {}
    _check_fine_tuned_settings(preset, cls, stored, given)
    head = spec.huggingface_head
    hf_weights = None
    if not stored and head is not None:
        hf_weights = read_huggingface_dense_head(preset_dir, head.architecture, head.prefix)
    backbone = backbone_cls.from_preset(preset_dir, **kwargs)
    settings = _preset_settings(cls, backbone, stored, given)
    head_arguments = []
    if size_name:
        trained = stored.get(size_name) or (None if hf_weights is None else len(hf_weights[1]))
        head_arguments.append(head_size_of(preset, size_name, given_size, trained, cls.__name__, unit))
    preprocessor_arguments = keyword_parameters(cls.preprocessor_cls)
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
    task.head_from_preset = bool(stored) or hf_weights is not None  # False: a new head.
    return task


def _check_fine_tuned_settings(preset: str, cls, stored: dict, given: dict) -> None:
    """Refuses a setting given for a fine-tuned preset that its head does not fit."""
    for name in cls.spec.fine_tuned_settings:
        if stored and name in given and given[name] != stored.get(name):
            raise ValueError(
                f"The preset {preset!r} was fine-tuned with {name}={stored.get(name)}; its head does "
                f"not fit {name}={given[name]}. Load the backbone alone (BertBackbone.from_preset) for a new head."
            )


def _preset_settings(cls, backbone, stored: dict, given: dict) -> dict:
    """The task's `preset_settings`: defaults (capped at the backbone's length), then stored, then given."""
    defaults = task_settings(cls)
    settings = {name: defaults[name] for name in cls.spec.preset_settings}
    if "sequence_length" in settings:
        settings["sequence_length"] = min(settings["sequence_length"], backbone.max_sequence_length)
    settings.update({name: value for name, value in stored.items() if name in settings})
    settings.update(given)
    return settings


def head_size_of(preset: str, name: str, given: int | None, trained: int | None, task: str, unit: str) -> int:
    """The head's output size: `given` (the `name` argument) or the `trained` head's; both must agree."""
    if trained and given is not None and int(given) != int(trained):
        raise ValueError(
            f"{name}={given}, but the preset {preset!r} is a {task} trained for {trained} {unit}. Omit "
            f"{name} to use its head, or load the backbone alone (BertBackbone.from_preset) for a new "
            f"head of {given} {unit}."
        )
    if not trained and given is None:
        raise ValueError(f"The preset {preset!r} has no {task} head: pass {name}=... for a new one.")
    return int(given) if given is not None else int(trained)
