"""Tokenizer presets (vocabulary and casing): read from keras_bert3, Hugging Face or keras-hub."""

import os

import keras

from keras_bert3.files.write_failed import write_failures_named
from keras_bert3.presets.huggingface_checkpoint import HF_TOKENIZER_CONFIG_FILE
from keras_bert3.presets.huggingface_checkpoint import HF_VOCABULARY_FILE
from keras_bert3.presets.huggingface_checkpoint import is_huggingface_checkpoint
from keras_bert3.presets.keras_hub_preset import KERAS_HUB_TOKENIZER_CONFIG_FILE
from keras_bert3.presets.keras_hub_preset import KERAS_HUB_VOCABULARY_FILE
from keras_bert3.presets.keras_hub_preset import is_keras_hub_preset
from keras_bert3.presets.preset_format import TOKENIZER_CONFIG_FILE
from keras_bert3.presets.preset_format import VOCABULARY_FILE
from keras_bert3.presets.preset_format import is_keras_bert3_preset
from keras_bert3.presets.preset_format import read_json
from keras_bert3.presets.preset_format import write_json
from keras_bert3.presets.preset_format import write_metadata
from keras_bert3.presets.preset_loader import resolve_preset

HF_SPECIAL_TOKENS = ("cls_token", "sep_token", "pad_token", "mask_token", "unk_token")  # Their names are ours.


def save_tokenizer(tokenizer, preset_dir: str) -> None:
    """Writes vocabulary.txt and tokenizer.json (the config without vocabulary)."""
    with write_failures_named(preset_dir, "the preset"):
        os.makedirs(preset_dir, exist_ok=True)
        serialized = keras.saving.serialize_keras_object(tokenizer)
        serialized["config"].pop("vocabulary", None)
        write_json(os.path.join(preset_dir, TOKENIZER_CONFIG_FILE), serialized)
        with open(os.path.join(preset_dir, VOCABULARY_FILE), "w", encoding="utf-8") as f:
            f.write("".join(token + "\n" for token in tokenizer.get_vocabulary()))
        write_metadata(preset_dir, vocabulary_size=tokenizer.vocabulary_size())


def _require(path: str, what: str, preset_dir: str) -> str:
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"The preset {preset_dir!r} has no {os.path.relpath(path, preset_dir)}: "
            f"its {what} is missing. Copy the complete directory, or build the "
            "tokenizer with `BertTokenizer(vocabulary=...)`."
        )
    return path


def _huggingface_settings(preset_dir: str) -> dict:
    """Casing (tokenizer_config.json, else tokenizer.json's normalizer) and special tokens."""
    settings = {}
    path = os.path.join(preset_dir, HF_TOKENIZER_CONFIG_FILE)
    config = read_json(path) if os.path.isfile(path) else {}
    if "do_lower_case" in config:
        settings["lowercase"] = bool(config["do_lower_case"])
        if config.get("strip_accents") is not None:
            settings["strip_accents"] = bool(config["strip_accents"])
    else:
        fast_path = os.path.join(preset_dir, "tokenizer.json")
        normalizer = read_json(fast_path).get("normalizer") if os.path.isfile(fast_path) else None
        if normalizer and normalizer.get("type") == "BertNormalizer":
            settings["lowercase"] = bool(normalizer.get("lowercase", True))
            if normalizer.get("strip_accents") is not None:
                settings["strip_accents"] = bool(normalizer["strip_accents"])
    for name in HF_SPECIAL_TOKENS:
        value = config.get(name)
        if isinstance(value, dict):  # Serialized AddedToken.
            value = value.get("content")
        if isinstance(value, str):
            settings[name] = value
    return settings


def load_tokenizer(preset: str, *, cls, **overrides):
    """Reads a tokenizer from any supported preset; see `BertTokenizer.from_preset`."""
    preset_dir = resolve_preset(preset)
    if is_keras_bert3_preset(preset_dir):
        config_path = _require(os.path.join(preset_dir, TOKENIZER_CONFIG_FILE), "tokenizer config", preset_dir)
        vocabulary = _require(os.path.join(preset_dir, VOCABULARY_FILE), "vocabulary", preset_dir)
        config = dict(read_json(config_path)["config"])
    elif is_huggingface_checkpoint(preset_dir):
        vocabulary = _require(os.path.join(preset_dir, HF_VOCABULARY_FILE), "vocabulary (vocab.txt)", preset_dir)
        config = _huggingface_settings(preset_dir)
    elif is_keras_hub_preset(preset_dir):
        vocabulary = _require(os.path.join(preset_dir, KERAS_HUB_VOCABULARY_FILE), "vocabulary", preset_dir)
        config_path = os.path.join(preset_dir, KERAS_HUB_TOKENIZER_CONFIG_FILE)
        theirs = read_json(config_path)["config"] if os.path.isfile(config_path) else {}
        config = {"lowercase": bool(theirs.get("lowercase", False))}
    else:
        raise ValueError(
            f"{preset_dir!r} is not a BERT preset with a tokenizer: found no "
            "keras_bert3 tokenizer.json, no Hugging Face vocab.txt and no keras-hub "
            f"vocabulary. It holds: {sorted(os.listdir(preset_dir))[:20]}."
        )
    config.update(overrides)
    config["vocabulary"] = vocabulary
    return cls.from_config(config)
