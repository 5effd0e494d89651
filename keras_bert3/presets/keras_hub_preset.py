"""keras-hub BERT presets, loaded with keras-hub and copied into a `BertBackbone` (tanh GELU)."""

import os

import numpy as np

from keras_bert3.files.json_files import read_json
from keras_bert3.presets.huggingface_checkpoint import assign

KERAS_HUB_CONFIG_FILE = "config.json"
KERAS_HUB_VOCABULARY_FILE = os.path.join("assets", "tokenizer", "vocabulary.txt")
KERAS_HUB_TOKENIZER_CONFIG_FILE = "tokenizer.json"


def _registered_name(path: str) -> str:
    if not os.path.isfile(path):
        return ""
    config = read_json(path)
    return config.get("registered_name") or config.get("module", "")


def is_keras_hub_preset(preset_dir: str) -> bool:
    """True when `preset_dir` was written by keras-hub."""
    return any(
        _registered_name(os.path.join(preset_dir, name)).startswith("keras_hub")
        for name in (KERAS_HUB_CONFIG_FILE, KERAS_HUB_TOKENIZER_CONFIG_FILE)
    )


def load_backbone_from_keras_hub(preset_dir: str, cls, **overrides):
    """Builds our backbone with the weights of a keras-hub `BertBackbone` preset."""
    import keras_hub

    name = _registered_name(os.path.join(preset_dir, KERAS_HUB_CONFIG_FILE))
    if not name.endswith("BertBackbone"):
        raise ValueError(
            f"{preset_dir!r} is a keras-hub preset of {name or 'no backbone'}, "
            "not of keras_hub>BertBackbone; keras_bert3 imports BERT only."
        )
    theirs = keras_hub.models.BertBackbone.from_preset(preset_dir)
    config = dict(
        vocabulary_size=theirs.vocabulary_size,
        num_layers=theirs.num_layers,
        num_heads=theirs.num_heads,
        hidden_dim=theirs.hidden_dim,
        intermediate_dim=theirs.intermediate_dim,
        dropout=theirs.dropout,
        max_sequence_length=theirs.max_sequence_length,
        num_segments=theirs.num_segments,
        activation="gelu_approximate",  # keras-hub's BERT always uses these two.
        layer_norm_epsilon=1e-12,
    )
    config.update(overrides)
    from keras_bert3.upstream.loaded_variables import values_loaded_next

    with values_loaded_next():  # Ours draws no random weights: each is copied from theirs.
        ours = cls(**config)
        copy_embeddings(ours.embeddings, theirs)
        for i, block in enumerate(ours.encoder_blocks):
            copy_encoder_block(block, theirs.get_layer(f"transformer_layer_{i}"), ours.hidden_dim)
        copy_dense(ours.pooler, theirs.get_layer("pooled_dense"))
    return ours


def copy(variable, value, name: str) -> None:
    """Assigns a keras-hub weight (`name` in errors) to one of ours of the same shape."""
    assign(variable, np.asarray(value), name)


def copy_embeddings(embeddings, theirs) -> None:
    """keras-hub's token, segment and position embeddings and their LayerNorm into our `BertEmbeddings`."""
    copy(embeddings.token_embedding.embeddings, theirs.token_embedding.embeddings, "token_embedding")
    copy(embeddings.segment_embedding.embeddings, theirs.segment_embedding.embeddings, "segment_embedding")
    copy(
        embeddings.position_embedding.embeddings,
        theirs.position_embedding.position_embeddings,
        "position_embedding",
    )
    copy_layer_norm(embeddings.layer_norm, theirs.get_layer("embeddings_layer_norm"))


def copy_encoder_block(block, transformer_layer, hidden: int) -> None:
    """A keras-hub `TransformerEncoder` into our `BertEncoderBlock`, Q/K/V fused into `qkv_dense`."""
    from keras_bert3.upstream.keras_hub_encoder_parts import transformer_encoder_parts

    parts = transformer_encoder_parts(transformer_layer)
    attention = parts["attention"]
    name = transformer_layer.name
    qkv = (attention.query_dense, attention.key_dense, attention.value_dense)
    copy(  # keras-hub kernels are (hidden, heads, head_dim); ours is (hidden, 3 * hidden).
        block.qkv_dense.kernel,
        np.concatenate([np.reshape(d.kernel, (hidden, hidden)) for d in qkv], axis=1),
        f"{name} query/key/value kernels",
    )
    copy(
        block.qkv_dense.bias,
        np.concatenate([np.reshape(d.bias, (hidden,)) for d in qkv]),
        f"{name} query/key/value biases",
    )
    output = attention.output_dense
    copy(block.attention_output_dense.kernel, np.reshape(output.kernel, (hidden, hidden)), "attention output")
    copy(block.attention_output_dense.bias, output.bias, "attention output bias")
    copy_layer_norm(block.attention_layer_norm, parts["attention_layer_norm"])
    copy_dense(block.intermediate_dense, parts["intermediate_dense"])
    copy_dense(block.output_dense, parts["output_dense"])
    copy_layer_norm(block.output_layer_norm, parts["output_layer_norm"])


def copy_dense(ours, theirs) -> None:
    """A keras-hub `Dense`'s kernel and bias into ours."""
    copy(ours.kernel, theirs.kernel, theirs.path + "/kernel")
    copy(ours.bias, theirs.bias, theirs.path + "/bias")


def copy_layer_norm(ours, theirs) -> None:
    """A keras-hub `LayerNormalization`'s gamma and beta into ours."""
    copy(ours.gamma, theirs.gamma, theirs.path + "/gamma")
    copy(ours.beta, theirs.beta, theirs.path + "/beta")
