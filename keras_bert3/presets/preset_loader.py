"""`from_preset`: a preset handle to a local directory, read in its format (keras_bert3, Hugging Face, keras-hub)."""

import os

from keras_bert3.presets.huggingface_checkpoint import is_huggingface_checkpoint
from keras_bert3.presets.huggingface_checkpoint import load_backbone_from_huggingface
from keras_bert3.presets.keras_hub_preset import is_keras_hub_preset
from keras_bert3.presets.keras_hub_preset import load_backbone_from_keras_hub
from keras_bert3.presets.preset_format import is_keras_bert3_preset
from keras_bert3.presets.preset_format import load_backbone_from_keras_bert3_preset

HF_SCHEME = "hf://"
KAGGLE_SCHEME = "kaggle://"

KNOWN_PRESETS = {  # Pretrained checkpoints known by name, and where they are published.
    "bert_tiny_uncased": "hf://google/bert_uncased_L-2_H-128_A-2",
    "bert_mini_uncased": "hf://google/bert_uncased_L-4_H-256_A-4",
    "bert_small_uncased": "hf://google/bert_uncased_L-4_H-512_A-8",
    "bert_medium_uncased": "hf://google/bert_uncased_L-8_H-512_A-8",
    "bert_base_uncased": "hf://google-bert/bert-base-uncased",
    "bert_base_cased": "hf://google-bert/bert-base-cased",
    "bert_large_uncased": "hf://google-bert/bert-large-uncased",
    "bert_large_cased": "hf://google-bert/bert-large-cased",
    "bert_base_multilingual_cased": "hf://google-bert/bert-base-multilingual-cased",
    "all_minilm_l6_v2": "hf://sentence-transformers/all-MiniLM-L6-v2",
}

HF_FILES = [  # Files a Hugging Face BERT checkpoint needs; the rest is not downloaded.
    "config.json",
    "model.safetensors",
    "model.safetensors.index.json",
    "model-*.safetensors",
    "vocab.txt",
    "tokenizer_config.json",
    "tokenizer.json",
    "special_tokens_map.json",
]


def offline() -> bool:
    """True when the user asked for no network (`KERAS_BERT3_OFFLINE=1` or `HF_HUB_OFFLINE=1`)."""
    return any(
        os.environ.get(name, "").lower() in ("1", "true", "yes") for name in ("KERAS_BERT3_OFFLINE", "HF_HUB_OFFLINE")
    )


def _download_failed(handle: str, reason: str) -> OSError:
    return OSError(
        f"Could not fetch the preset {handle!r}: {reason}. Without a network, "
        "download the checkpoint on a machine that has one (e.g. "
        "`huggingface-cli download <owner/name>` or the Kaggle page), copy the "
        "directory here and pass its path: `from_preset('/path/to/dir')`."
    )


def download(handle: str) -> str:
    """Downloads a remote handle through the hub's client library."""
    if offline():
        raise _download_failed(handle, "the network is switched off (KERAS_BERT3_OFFLINE or HF_HUB_OFFLINE)")
    try:
        if handle.startswith(HF_SCHEME):
            import huggingface_hub

            return huggingface_hub.snapshot_download(handle[len(HF_SCHEME) :], allow_patterns=HF_FILES)
        import kagglehub

        return kagglehub.model_download(handle[len(KAGGLE_SCHEME) :])
    except ImportError as error:
        raise _download_failed(handle, f"its client library is not installed ({error})") from error
    except Exception as error:  # The clients raise many kinds of network errors.
        raise _download_failed(handle, f"{type(error).__name__}: {error}") from error


def resolve_preset(preset: str) -> str:
    """A local directory for `preset` (a path, a handle or a `KNOWN_PRESETS` name), downloaded if needed."""
    preset = os.fspath(preset)
    if os.path.isdir(preset):
        return preset
    if preset in KNOWN_PRESETS:
        return download(KNOWN_PRESETS[preset])
    if preset.startswith((HF_SCHEME, KAGGLE_SCHEME)):
        return download(preset)
    if os.path.exists(preset):
        raise ValueError(
            f"{preset!r} is a file; a preset is a directory (a keras_bert3 "
            "preset, a Hugging Face checkpoint or a keras-hub preset)."
        )
    raise FileNotFoundError(
        f"No preset {preset!r}: it is not a local directory, not a remote handle "
        f"({HF_SCHEME}owner/name or {KAGGLE_SCHEME}owner/model/framework/variant) "
        f"and not a known name ({', '.join(sorted(KNOWN_PRESETS))}). For a random "
        "model of a standard size use `BertBackbone.from_size('base')`."
    )


def load_backbone(preset: str, *, cls, **overrides):
    """Reads a backbone from any supported preset; see `BertBackbone.from_preset`."""
    preset_dir = resolve_preset(preset)
    if is_keras_bert3_preset(preset_dir):
        return load_backbone_from_keras_bert3_preset(preset_dir, cls, **overrides)
    if is_huggingface_checkpoint(preset_dir):
        return load_backbone_from_huggingface(preset_dir, cls, **overrides)
    if is_keras_hub_preset(preset_dir):
        return load_backbone_from_keras_hub(preset_dir, cls, **overrides)
    raise ValueError(
        f"{preset_dir!r} is not a BERT preset: found no keras_bert3 config.json, "
        "no Hugging Face config.json with model.safetensors, and no keras-hub "
        f"preset. It holds: {sorted(os.listdir(preset_dir))[:20]}."
    )
