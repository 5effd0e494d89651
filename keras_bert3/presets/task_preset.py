"""Task presets: a backbone preset (with its tokenizer) plus a task's head and
settings, so that `Task.from_preset(dir)` restores a fine-tuned model.

    task.json               the task's class and config (num_classes, dropout, ...)
    task_head.weights.h5    the head's weights, by variable path
"""

import os

from keras_bert3.files.weight_files import read_arrays
from keras_bert3.files.weight_files import write_arrays
from keras_bert3.files.write_failed import write_failures_named
from keras_bert3.presets.huggingface_checkpoint import assign
from keras_bert3.presets.preset_format import read_json
from keras_bert3.presets.preset_format import write_json
from keras_bert3.presets.preset_format import write_metadata

TASK_CONFIG_FILE = "task.json"
TASK_HEAD_WEIGHTS_FILE = "task_head.weights.h5"


def head_variables(head_layers) -> dict:
    """The variables of `head_layers`, by path (e.g. "logits/kernel")."""
    return {variable.path: variable for layer in head_layers for variable in layer.weights}


def save_task(task, preset_dir: str, *, config: dict, head_layers) -> None:
    """Writes the backbone, the tokenizer, `config` and the head's weights."""
    with write_failures_named(preset_dir, "the preset"):
        task.backbone.save_to_preset(preset_dir)
        task.preprocessor.tokenizer.save_to_preset(preset_dir)
        write_json(os.path.join(preset_dir, TASK_CONFIG_FILE), {"class_name": type(task).__name__, "config": config})
        variables = head_variables(head_layers)
        write_arrays(
            os.path.join(preset_dir, TASK_HEAD_WEIGHTS_FILE),
            {path: variable.numpy() for path, variable in variables.items()},
            what="the task head's weights",
        )
        write_metadata(preset_dir, task=type(task).__name__, task_head=sorted(variables))


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
