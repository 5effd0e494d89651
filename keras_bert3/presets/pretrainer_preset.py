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
    if os.path.isfile(os.path.join(preset_dir, HEADS_WEIGHTS_FILE)):
        load_head_arrays(
            preset_dir, _head_variables(pretrainer), hint="was it saved with nsp=False? Pass the same nsp."
        )
    elif is_huggingface_checkpoint(preset_dir):
        load_huggingface_heads(preset_dir, pretrainer.masked_lm_head, pretrainer.next_sentence_head)
    return pretrainer


def load_head_arrays(preset_dir: str, variables: dict, *, hint: str = "") -> None:
    """Assigns the pretraining heads' weights a pretrainer preset stores to `variables` (by path, as
    `_head_variables` names them: "masked_lm_head/dense/kernel", ...); a missing one is refused naming it."""
    heads_path = os.path.join(preset_dir, HEADS_WEIGHTS_FILE)
    stored = read_arrays(heads_path)
    for path, variable in variables.items():
        if path not in stored:
            raise ValueError(f"{heads_path} has no weights for {path!r} (it has {sorted(stored)}). {hint}".strip())
        assign(variable, stored[path], f"{HEADS_WEIGHTS_FILE}:{path}")


def stored_heads(preset: str) -> dict | None:
    """Which pretraining heads a preset holds (one `keras-bert3 pretrain` wrote, or a Hugging Face checkpoint with
    them): `{"nsp": bool}` (a masked-LM head, and a next-sentence one where `nsp`), or None where it holds none."""
    from keras_bert3.presets.huggingface_checkpoint import SafetensorsCheckpoint

    preset_dir = resolve_preset(preset)
    heads_path = os.path.join(preset_dir, HEADS_WEIGHTS_FILE)
    if os.path.isfile(heads_path):
        return {"nsp": any(path.startswith("next_sentence_head/") for path in read_arrays(heads_path))}
    if is_huggingface_checkpoint(preset_dir):
        checkpoint = SafetensorsCheckpoint(preset_dir)
        if checkpoint.has("cls.predictions.bias"):
            return {"nsp": checkpoint.has("cls.seq_relationship.weight")}
    return None
