"""The keras_bert3 preset format: a local directory holding

config.json          the backbone's Keras config (`keras.saving` format) model.weights.h5     the backbone's weights
tokenizer.json       the tokenizer's config, without its vocabulary vocabulary.txt       the WordPiece vocabulary, one
token per line metadata.json        versions, parameter count, where it came from
"""

import datetime
import json
import os

import keras

from keras_bert3.files.json_files import read_json
from keras_bert3.files.weight_files import load_keras_weights
from keras_bert3.files.weight_files import save_keras_weights
from keras_bert3.files.write_failed import write_failures_named

BACKBONE_CONFIG_FILE = "config.json"
BACKBONE_WEIGHTS_FILE = "model.weights.h5"
TOKENIZER_CONFIG_FILE = "tokenizer.json"
VOCABULARY_FILE = "vocabulary.txt"
METADATA_FILE = "metadata.json"


def write_json(path: str, data: dict) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, ensure_ascii=False)
        f.write("\n")


def is_keras_bert3_preset(preset_dir: str) -> bool:
    """True when `preset_dir` holds a config written by keras_bert3."""
    for name in (BACKBONE_CONFIG_FILE, TOKENIZER_CONFIG_FILE):
        path = os.path.join(preset_dir, name)
        if os.path.isfile(path):
            return read_json(path).get("module", "").startswith("keras_bert3")
    return False


def write_metadata(preset_dir: str, **fields) -> None:
    """Adds `fields` to the preset's metadata.json (creating it if needed)."""
    from keras_bert3.version import __version__

    path = os.path.join(preset_dir, METADATA_FILE)
    metadata = read_json(path) if os.path.isfile(path) else {}
    metadata.update(
        keras_bert3_version=__version__,
        keras_version=keras.__version__,
        saved_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        **fields,
    )
    write_json(path, metadata)


def save_backbone(backbone, preset_dir: str) -> None:
    """Writes the backbone's config, weights and metadata into `preset_dir`."""
    with write_failures_named(preset_dir, "the preset"):
        os.makedirs(preset_dir, exist_ok=True)
        write_json(
            os.path.join(preset_dir, BACKBONE_CONFIG_FILE),
            keras.saving.serialize_keras_object(backbone),
        )
        save_keras_weights(backbone, os.path.join(preset_dir, BACKBONE_WEIGHTS_FILE), what="the preset's weights")
        write_metadata(preset_dir, parameter_count=int(backbone.count_params()))


def load_backbone_from_keras_bert3_preset(preset_dir: str, cls, **overrides):
    """Builds the backbone from config.json and loads model.weights.h5."""
    config_path = os.path.join(preset_dir, BACKBONE_CONFIG_FILE)
    weights_path = os.path.join(preset_dir, BACKBONE_WEIGHTS_FILE)
    if not os.path.isfile(config_path):
        raise FileNotFoundError(
            f"The preset {preset_dir!r} has no {BACKBONE_CONFIG_FILE}: it holds no "
            "backbone. Save one with `backbone.save_to_preset(dir)`."
        )
    if not os.path.isfile(weights_path):
        raise FileNotFoundError(
            f"The preset {preset_dir!r} has a {BACKBONE_CONFIG_FILE} but no "
            f"{BACKBONE_WEIGHTS_FILE}: its weights are missing. Copy the whole "
            "directory written by `save_to_preset`, or call "
            f"`{cls.__name__}.from_config(...)` for random weights."
        )
    serialized = read_json(config_path)
    config = dict(serialized["config"], **overrides)
    backbone = cls.from_config(config)
    load_keras_weights(backbone, weights_path)
    return backbone
