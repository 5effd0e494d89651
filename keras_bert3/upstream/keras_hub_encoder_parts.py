"""The sublayers of a keras-hub `TransformerEncoder`, whose weights a keras-hub
BERT preset holds (keras-hub's own checkpoint converters read them the same way).

Private APIs (keras-hub): `keras_hub.layers.TransformerEncoder._self_attention_layer`, `._self_attention_layer_norm`,
`._feedforward_intermediate_dense`, `._feedforward_output_dense`, `._feedforward_layer_norm` (set in `build`)."""

import keras_hub

from keras_bert3.upstream.private_api import require_private

PARTS = {
    "attention": "_self_attention_layer",
    "attention_layer_norm": "_self_attention_layer_norm",
    "intermediate_dense": "_feedforward_intermediate_dense",
    "output_dense": "_feedforward_output_dense",
    "output_layer_norm": "_feedforward_layer_norm",
}


def transformer_encoder_parts(layer: keras_hub.layers.TransformerEncoder) -> dict:
    """`{part: sublayer}` of a built keras-hub `TransformerEncoder`, under our names (`PARTS`' keys)."""
    for name in PARTS.values():
        require_private(layer, name, package=keras_hub, why="importing keras-hub BERT presets")
    return {part: getattr(layer, name) for part, name in PARTS.items()}
