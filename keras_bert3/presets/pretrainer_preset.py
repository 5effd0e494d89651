"""Pretrainer presets: a backbone preset plus the pretraining heads' weights."""

import os

from keras_bert3.files.weight_files import read_arrays
from keras_bert3.files.weight_files import write_arrays
from keras_bert3.files.write_failed import write_failures_named
from keras_bert3.presets.huggingface_checkpoint import assign
from keras_bert3.presets.huggingface_checkpoint import is_huggingface_checkpoint
from keras_bert3.presets.huggingface_checkpoint import load_huggingface_heads
from keras_bert3.presets.preset_format import write_metadata
from keras_bert3.presets.preset_loader import resolve_preset

HEADS_WEIGHTS_FILE = "pretraining_heads.weights.h5"


def _head_variables(pretrainer) -> dict:
    heads = [pretrainer.masked_lm_head]
    if pretrainer.next_sentence_head is not None:
        heads.append(pretrainer.next_sentence_head)
    variables = {}
    for head in heads:
        for variable in head.weights:
            if variable.path.startswith(head.name + "/"):  # Not the tied token embedding.
                variables[variable.path] = variable
    return variables


def save_pretrainer(pretrainer, preset_dir: str, tokenizer=None) -> None:
    """Writes the backbone (and `tokenizer`) as a preset, plus the pretraining heads' weights."""
    with write_failures_named(preset_dir, "the preset"):
        pretrainer.backbone.save_to_preset(preset_dir)
        if tokenizer is not None:
            tokenizer.save_to_preset(preset_dir)
        write_arrays(
            os.path.join(preset_dir, HEADS_WEIGHTS_FILE),
            {path: variable.numpy() for path, variable in _head_variables(pretrainer).items()},
            what="the pretraining heads' weights",
        )
        write_metadata(preset_dir, pretraining_heads=sorted(_head_variables(pretrainer)))


def load_pretrainer(preset: str, *, cls, backbone_cls, nsp: bool, packed: bool = False, **backbone_overrides):
    """A pretrainer `cls` on a backbone from `preset`, with the heads it has (ours or Hugging Face's)."""
    preset_dir = resolve_preset(preset)
    pretrainer = cls(backbone_cls.from_preset(preset_dir, **backbone_overrides), nsp=nsp, packed=packed)
    heads_path = os.path.join(preset_dir, HEADS_WEIGHTS_FILE)
    if os.path.isfile(heads_path):
        stored = read_arrays(heads_path)
        for path, variable in _head_variables(pretrainer).items():
            if path not in stored:
                raise ValueError(
                    f"{heads_path} has no weights for {path!r} (it has {sorted(stored)}); "
                    "was it saved by a pretrainer with nsp=False? Pass the same nsp."
                )
            assign(variable, stored[path], f"{HEADS_WEIGHTS_FILE}:{path}")
    elif is_huggingface_checkpoint(preset_dir):
        load_huggingface_heads(preset_dir, pretrainer.masked_lm_head, pretrainer.next_sentence_head)
    return pretrainer
