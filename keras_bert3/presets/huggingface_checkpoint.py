"""Hugging Face BERT checkpoints (config.json + safetensors + vocab.txt), read and written.
PyTorch `.bin` pickles are refused: unpickling runs arbitrary code."""

import json
import os

import numpy as np

from keras_bert3.files.json_files import read_json
from keras_bert3.layers.activations import activation_from_hugging_face

HF_CONFIG_FILE = "config.json"
HF_WEIGHTS_FILE = "model.safetensors"
HF_WEIGHTS_INDEX_FILE = "model.safetensors.index.json"
HF_VOCABULARY_FILE = "vocab.txt"
HF_TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
PICKLED_WEIGHTS_FILES = ("pytorch_model.bin", "pytorch_model.bin.index.json")
HUGGING_FACE_NAMES = {  # Our activation -> Hugging Face's `hidden_act`.
    "gelu": "gelu",
    "gelu_approximate": "gelu_pytorch_tanh",
    "relu": "relu",
    "silu": "silu",
    "tanh": "tanh",
}


def is_huggingface_checkpoint(preset_dir: str) -> bool:
    """True when `preset_dir` has a Hugging Face `config.json` (with `model_type`)."""
    path = os.path.join(preset_dir, HF_CONFIG_FILE)
    if not os.path.isfile(path):
        return False
    config = read_json(path)
    return isinstance(config, dict) and "model_type" in config


def read_huggingface_config(preset_dir: str) -> dict:
    config = read_json(os.path.join(preset_dir, HF_CONFIG_FILE))
    model_type = config.get("model_type")
    if model_type != "bert":
        raise ValueError(
            f"{preset_dir!r} holds a Hugging Face checkpoint of model_type="
            f"{model_type!r}; keras_bert3 reads only model_type 'bert' (BERT "
            "architectures such as bert-base, MiniLM or BioBERT)."
        )
    embedding_type = config.get("position_embedding_type", "absolute")
    if embedding_type != "absolute":
        raise ValueError(
            f"position_embedding_type={embedding_type!r} is not supported; "
            "keras_bert3 implements BERT's learned absolute positions."
        )
    return config


# `BertBackbone` arguments and the Hugging Face `BertConfig` keys that hold them, with the default where a
# config leaves one out (None: a config always has it).
HF_CONFIG_KEYS = {
    "vocabulary_size": ("vocab_size", None),
    "num_layers": ("num_hidden_layers", None),
    "num_heads": ("num_attention_heads", None),
    "hidden_dim": ("hidden_size", None),
    "intermediate_dim": ("intermediate_size", None),
    "dropout": ("hidden_dropout_prob", 0.1),
    "attention_dropout": ("attention_probs_dropout_prob", 0.1),
    "max_sequence_length": ("max_position_embeddings", 512),
    "num_segments": ("type_vocab_size", 2),
    "layer_norm_epsilon": ("layer_norm_eps", 1e-12),
    "initializer_range": ("initializer_range", 0.02),
}


def backbone_config_from_huggingface(config: dict) -> dict:
    """Maps a Hugging Face `BertConfig` dict to `BertBackbone` arguments."""
    arguments = {
        ours: config[key] if default is None else config.get(key, default)
        for ours, (key, default) in HF_CONFIG_KEYS.items()
    }
    return {**arguments, "activation": activation_from_hugging_face(config.get("hidden_act", "gelu"))}


def huggingface_config_from_backbone(backbone) -> dict:
    """The `BertConfig` dict of a backbone, for `transformers` to read."""
    config = {key: getattr(backbone, ours) for ours, (key, _) in HF_CONFIG_KEYS.items()}
    if backbone.attention_dropout is None:
        config["attention_probs_dropout_prob"] = backbone.dropout
    config.update(
        hidden_act=HUGGING_FACE_NAMES[backbone.activation], position_embedding_type="absolute", pad_token_id=0
    )
    return {"architectures": ["BertModel"], "model_type": "bert", **config}


def index_shards(index_path: str) -> list[str]:
    """The shard files that a sharded checkpoint's `model.safetensors.index.json` names, each checked to be a
    file in the index's own folder: a name that is absolute or goes up (`..`) is refused, as it would read a file
    from elsewhere on the machine."""
    folder = os.path.dirname(index_path)
    index = read_json(index_path)
    weight_map = index.get("weight_map") if isinstance(index, dict) else None
    if not isinstance(weight_map, dict) or not all(isinstance(name, str) for name in weight_map.values()):
        raise ValueError(
            f"{index_path} has no 'weight_map' (an object from each tensor's name to the file that holds it): it "
            "is not a safetensors index. Download or copy it again."
        )
    shards = sorted(set(weight_map.values()))
    for shard in shards:
        parts = shard.replace("\\", "/").split("/")
        if not shard or os.path.isabs(shard) or ".." in parts:
            raise ValueError(
                f"{index_path} names the shard {shard!r}, outside the checkpoint's folder: refused (a shard must be "
                "a file beside the index). Take the checkpoint again from a source you trust."
            )
        if not os.path.isfile(os.path.join(folder, shard)):
            raise FileNotFoundError(
                f"{index_path} names the shard {shard!r}, which is not in {folder}: the checkpoint was copied in "
                "part. Copy its missing shard files."
            )
    return shards


class SafetensorsCheckpoint:
    """A Hugging Face checkpoint's tensors by `BertModel` name, whatever the prefix or LayerNorm naming."""

    def __init__(self, preset_dir: str):
        from safetensors import safe_open

        self.preset_dir = preset_dir
        files = self._weight_files(preset_dir)
        self._handles = []
        for path in files:
            try:
                self._handles.append(safe_open(path, framework="numpy"))
            except Exception as error:  # SafetensorError, or OSError.
                raise ValueError(
                    f"{path} cannot be read as safetensors ({error}): it is truncated or damaged, or not a "
                    "safetensors file. Download or copy it again."
                ) from error
        self._where = {}
        for handle in self._handles:
            for key in handle.keys():
                self._where[key] = handle

    @staticmethod
    def _weight_files(preset_dir: str) -> list[str]:
        index_path = os.path.join(preset_dir, HF_WEIGHTS_INDEX_FILE)
        if os.path.isfile(index_path):
            return [os.path.join(preset_dir, shard) for shard in index_shards(index_path)]
        path = os.path.join(preset_dir, HF_WEIGHTS_FILE)
        if os.path.isfile(path):
            return [path]
        if any(os.path.isfile(os.path.join(preset_dir, f)) for f in PICKLED_WEIGHTS_FILES):
            raise ValueError(
                f"{preset_dir!r} has its weights only in pytorch_model.bin, a "
                "pickle file, which keras_bert3 never loads (unpickling can run "
                "arbitrary code). Convert it to safetensors once, where you trust "
                "the file: `transformers.BertModel.from_pretrained(dir)"
                ".save_pretrained(dir, safe_serialization=True)`, or take the "
                "model.safetensors from the model's hub page."
            )
        raise FileNotFoundError(
            f"{preset_dir!r} has a Hugging Face config.json but no "
            f"{HF_WEIGHTS_FILE}: its weights are missing. Download the "
            "checkpoint's model.safetensors into the same directory."
        )

    def keys(self) -> list[str]:
        return list(self._where)

    def _resolve(self, name: str) -> str | None:
        candidates = [name, "bert." + name]
        for old, new in ((".weight", ".gamma"), (".bias", ".beta")):
            if "LayerNorm" in name and name.endswith(old):
                legacy = name[: -len(old)] + new
                candidates += [legacy, "bert." + legacy]
        for key in candidates:
            if key in self._where:
                return key
        return None

    def has(self, name: str) -> bool:
        return self._resolve(name) is not None

    def get(self, name: str) -> np.ndarray:
        key = self._resolve(name)
        if key is None:
            raise ValueError(
                f"The checkpoint in {self.preset_dir!r} has no tensor {name!r}; is it a complete BERT checkpoint?"
            )
        return self._where[key].get_tensor(key)


def assign(variable, value: np.ndarray, name: str) -> None:
    """Assigns `value` to `variable`, or says which tensor has the wrong shape."""
    if tuple(variable.shape) != tuple(value.shape):
        raise ValueError(
            f"Checkpoint tensor {name!r} has shape {tuple(value.shape)} but the "
            f"model built from its config.json expects {tuple(variable.shape)}. "
            "The weights and the config do not belong together."
        )
    from keras_bert3.upstream.loaded_variables import give_value

    give_value(variable, value.astype(variable.dtype))


def weight_map(backbone):
    """`(variable, huggingface_names, to_keras, to_huggingface)` converters for every backbone variable."""

    def same(tensors):
        return tensors[0]

    def transposed(tensors):
        return tensors[0].T

    def as_list(fn):
        return lambda value: [fn(value)]

    def dense(layer, prefix):
        yield layer.kernel, [prefix + ".weight"], transposed, as_list(np.transpose)
        yield layer.bias, [prefix + ".bias"], same, as_list(np.asarray)

    def layer_norm(layer, prefix):
        yield layer.gamma, [prefix + ".weight"], same, as_list(np.asarray)
        yield layer.beta, [prefix + ".bias"], same, as_list(np.asarray)

    embeddings = backbone.embeddings
    for layer, name in (
        (embeddings.token_embedding, "word_embeddings"),
        (embeddings.segment_embedding, "token_type_embeddings"),
        (embeddings.position_embedding, "position_embeddings"),
    ):
        yield layer.embeddings, [f"embeddings.{name}.weight"], same, as_list(np.asarray)
    yield from layer_norm(embeddings.layer_norm, "embeddings.LayerNorm")

    for i, block in enumerate(backbone.encoder_blocks):
        prefix = f"encoder.layer.{i}."
        qkv = [prefix + f"attention.self.{p}" for p in ("query", "key", "value")]
        yield (
            block.qkv_dense.kernel,
            [name + ".weight" for name in qkv],
            lambda tensors: np.concatenate([t.T for t in tensors], axis=1),
            lambda value: [t.T for t in np.split(np.asarray(value), 3, axis=1)],
        )
        yield (
            block.qkv_dense.bias,
            [name + ".bias" for name in qkv],
            lambda tensors: np.concatenate(tensors),
            lambda value: np.split(np.asarray(value), 3),
        )
        yield from dense(block.attention_output_dense, prefix + "attention.output.dense")
        yield from layer_norm(block.attention_layer_norm, prefix + "attention.output.LayerNorm")
        yield from dense(block.intermediate_dense, prefix + "intermediate.dense")
        yield from dense(block.output_dense, prefix + "output.dense")
        yield from layer_norm(block.output_layer_norm, prefix + "output.LayerNorm")
    yield from dense(backbone.pooler, "pooler.dense")


def load_backbone_from_huggingface(preset_dir: str, cls, **overrides):
    """Builds a backbone from a Hugging Face BERT checkpoint directory."""
    config = backbone_config_from_huggingface(read_huggingface_config(preset_dir))
    config.update(overrides)
    checkpoint = SafetensorsCheckpoint(preset_dir)
    from keras_bert3.upstream.loaded_variables import values_loaded_next

    with values_loaded_next():  # No random weights drawn for those the checkpoint has.
        backbone = cls(**config)
        for variable, names, to_keras, to_huggingface in weight_map(backbone):
            if names[0].startswith("pooler.") and not checkpoint.has(names[0]):
                continue  # e.g. BertForMaskedLM checkpoints have no pooler: it keeps its initializer's weights.
            tensors = [checkpoint.get(name) for name in names]
            expected = [t.shape for t in to_huggingface(np.zeros(variable.shape, "float32"))]
            found = [t.shape for t in tensors]
            if found != expected:
                raise ValueError(
                    f"Checkpoint tensor {' + '.join(names)} has shape "
                    f"{', '.join(map(str, found))} but the model built from "
                    f"{HF_CONFIG_FILE} expects {', '.join(map(str, expected))}. "
                    "The weights and the config do not belong together."
                )
            assign(variable, to_keras(tensors), " + ".join(names))
    return backbone


def read_huggingface_dense_head(preset_dir: str, architecture: str, prefix: str):
    """`(kernel (hidden, units), bias (units,))` of a task head in a Hugging Face
    checkpoint of `architecture` (e.g. "BertForTokenClassification"), or None:
    another architecture's head sits elsewhere (pooled output or every token)."""
    if not is_huggingface_checkpoint(preset_dir):
        return None
    if architecture not in read_huggingface_config(preset_dir).get("architectures", []):
        return None
    checkpoint = SafetensorsCheckpoint(preset_dir)
    if not checkpoint.has(prefix + "weight"):
        return None
    return checkpoint.get(prefix + "weight").T, checkpoint.get(prefix + "bias")


def load_huggingface_heads(preset_dir: str, masked_lm_head=None, next_sentence_head=None) -> list[str]:
    """Copies the pretraining heads of a `BertForPreTraining` (or `BertForMaskedLM`)
    checkpoint, where it has them, into built layers; returns the names loaded.

    Args:
        masked_lm_head: a `BertMaskedLMHead` (its projection is the token embedding, loaded with the backbone).
        next_sentence_head: a `keras.layers.Dense(2)` on the pooled output.
    """
    checkpoint = SafetensorsCheckpoint(preset_dir)
    loaded = []
    mlm = "cls.predictions."
    if masked_lm_head is not None and checkpoint.has(mlm + "bias"):
        pairs = [
            (masked_lm_head.dense.kernel, mlm + "transform.dense.weight", True),
            (masked_lm_head.dense.bias, mlm + "transform.dense.bias", False),
            (masked_lm_head.layer_norm.gamma, mlm + "transform.LayerNorm.weight", False),
            (masked_lm_head.layer_norm.beta, mlm + "transform.LayerNorm.bias", False),
            (masked_lm_head.output_bias, mlm + "bias", False),
        ]
        for variable, name, transpose in pairs:
            value = checkpoint.get(name)
            assign(variable, value.T if transpose else value, name)
        loaded.append("masked_lm")
    nsp = "cls.seq_relationship."
    if next_sentence_head is not None and checkpoint.has(nsp + "weight"):
        assign(next_sentence_head.kernel, checkpoint.get(nsp + "weight").T, nsp + "weight")
        assign(next_sentence_head.bias, checkpoint.get(nsp + "bias"), nsp + "bias")
        loaded.append("next_sentence")
    return loaded


def pretraining_head_tensors(masked_lm_head, next_sentence_head, backbone) -> dict:
    """The heads' weights under Hugging Face's names (`cls.predictions.*`, `cls.seq_relationship.*`), as
    `load_huggingface_heads` reads them; the decoder is the token embedding (tied)."""
    as_array = lambda variable: np.ascontiguousarray(variable.numpy(), dtype=np.float32)  # noqa: E731
    tensors = {}
    if masked_lm_head is not None:
        mlm = "cls.predictions."
        tensors |= {
            mlm + "transform.dense.weight": as_array(masked_lm_head.dense.kernel).T.copy(),
            mlm + "transform.dense.bias": as_array(masked_lm_head.dense.bias),
            mlm + "transform.LayerNorm.weight": as_array(masked_lm_head.layer_norm.gamma),
            mlm + "transform.LayerNorm.bias": as_array(masked_lm_head.layer_norm.beta),
            mlm + "bias": as_array(masked_lm_head.output_bias),
            mlm + "decoder.weight": as_array(backbone.embeddings.token_embedding.embeddings),
        }
    if next_sentence_head is not None:
        tensors["cls.seq_relationship.weight"] = as_array(next_sentence_head.kernel).T.copy()
        tensors["cls.seq_relationship.bias"] = as_array(next_sentence_head.bias)
    return tensors


def export_backbone_to_huggingface(
    backbone, output_dir: str, *, vocabulary=None, lowercase=None, masked_lm_head=None, next_sentence_head=None
):
    """Writes `backbone` as a Hugging Face `BertModel` checkpoint directory; with its pretraining heads (a
    `BertMaskedLMHead`, and a `Dense(2)` on the pooled output), as a `BertForMaskedLM` or `BertForPreTraining` one.

    `vocabulary` (tokens or a `BertTokenizer`) and `lowercase` are written too, so
    that `transformers`' `BertModel` and `BertTokenizerFast` both load the directory."""
    from safetensors.numpy import save_file

    os.makedirs(output_dir, exist_ok=True)
    prefix = "" if masked_lm_head is None else "bert."  # A task checkpoint's backbone sits under `bert.`.
    tensors = {}
    for variable, names, _, to_huggingface in weight_map(backbone):
        for name, value in zip(names, to_huggingface(np.asarray(variable.numpy()))):
            tensors[prefix + name] = np.ascontiguousarray(value, dtype=np.float32)
    tensors |= pretraining_head_tensors(masked_lm_head, next_sentence_head, backbone)
    save_file(tensors, os.path.join(output_dir, HF_WEIGHTS_FILE), metadata={"format": "pt"})
    config = huggingface_config_from_backbone(backbone)
    if masked_lm_head is not None:
        config["architectures"] = ["BertForPreTraining" if next_sentence_head is not None else "BertForMaskedLM"]
    with open(os.path.join(output_dir, HF_CONFIG_FILE), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2)
    if vocabulary is not None:
        if hasattr(vocabulary, "get_vocabulary"):
            if lowercase is None:
                lowercase = getattr(vocabulary, "lowercase", None)
            vocabulary = vocabulary.get_vocabulary()
        with open(os.path.join(output_dir, HF_VOCABULARY_FILE), "w", encoding="utf-8") as f:
            f.write("".join(token + "\n" for token in vocabulary))
        tokenizer_config = {"tokenizer_class": "BertTokenizer", "model_max_length": backbone.max_sequence_length}
        if lowercase is not None:
            tokenizer_config["do_lower_case"] = bool(lowercase)
        with open(os.path.join(output_dir, HF_TOKENIZER_CONFIG_FILE), "w", encoding="utf-8") as f:
            json.dump(tokenizer_config, f, indent=2)
