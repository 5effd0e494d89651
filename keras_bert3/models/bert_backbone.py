"""BertBackbone: the BERT encoder of Devlin et al. 2019 as a Keras 3 functional model."""

import keras

from keras_bert3.layers.bert_embeddings import BertEmbeddings
from keras_bert3.layers.bert_encoder_block import BertEncoderBlock
from keras_bert3.layers.packed_sequences import packed_attention_mask
from keras_bert3.layers.packed_sequences import packed_positions
from keras_bert3.models.bert_sizes import BERT_UNCASED_VOCABULARY_SIZE
from keras_bert3.models.bert_sizes import get_bert_size


@keras.saving.register_keras_serializable(package="keras_bert3")
class BertBackbone(keras.Model):
    """BERT (Devlin et al. 2019): embeddings, a stack of bidirectional post-LN Transformer blocks,
    and a tanh pooler on the first ([CLS]) token.

    Args:
        vocabulary_size, num_layers, num_heads, hidden_dim, intermediate_dim (feed-forward width): int.
        dropout: float. Dropout on embeddings and block outputs.
        attention_dropout: float or None. Dropout on attention probabilities; `None`: `dropout`.
        max_sequence_length, num_segments: int. Numbers of learned positions and of segment ids.
        activation: str. `"gelu"` (exact erf, as Hugging Face) or `"gelu_approximate"` (tanh, as the
            original TensorFlow BERT).
        initializer_range: float. Stddev of the truncated normal initializer.
        dtype: a Keras dtype policy, e.g. `"float32"` or `"mixed_bfloat16"`.

    Inputs: a dict of int32 `(batch, seq)` `token_ids`, `segment_ids` and `padding_mask` (1 for real tokens). Outputs: a
    dict of `sequence_output` `(batch, seq, hidden_dim)` and `pooled_output` `(batch, hidden_dim)`.

    Example:
    >>> backbone = BertBackbone(vocabulary_size=100, num_layers=2, num_heads=2, hidden_dim=8, intermediate_dim=32)
    >>> ids = np.array([[2, 5, 6, 3, 0]])
    >>> inputs = {"token_ids": ids, "segment_ids": np.zeros_like(ids), "padding_mask": np.array([[1, 1, 1, 1, 0]])}
    >>> backbone(inputs)["pooled_output"].shape
    (1, 8)
    """

    def __init__(
        self,
        vocabulary_size: int,
        num_layers: int,
        num_heads: int,
        hidden_dim: int,
        intermediate_dim: int,
        dropout: float = 0.1,
        attention_dropout: float | None = None,
        max_sequence_length: int = 512,
        num_segments: int = 2,
        activation: str = "gelu",
        layer_norm_epsilon: float = 1e-12,
        initializer_range: float = 0.02,
        dtype=None,
        **kwargs,
    ):
        """Longer than a screen on purpose: the layers, the functional graph on
        them and the config, in the three parts every keras-hub backbone has."""
        if int(num_layers) < 1:
            raise ValueError(f"num_layers={num_layers}: a BERT backbone needs at least one encoder block.")
        # === Layers ===
        self.embeddings = BertEmbeddings(
            vocabulary_size,
            hidden_dim,
            max_sequence_length=max_sequence_length,
            num_segments=num_segments,
            dropout=dropout,
            layer_norm_epsilon=layer_norm_epsilon,
            initializer_range=initializer_range,
            dtype=dtype,
            name="embeddings",
        )
        self.encoder_blocks = [
            BertEncoderBlock(
                num_heads,
                intermediate_dim,
                dropout=dropout,
                attention_dropout=attention_dropout,
                activation=activation,
                layer_norm_epsilon=layer_norm_epsilon,
                initializer_range=initializer_range,
                dtype=dtype,
                name=f"encoder_block_{i}",
            )
            for i in range(num_layers)
        ]
        self.pooler = keras.layers.Dense(
            hidden_dim,
            activation="tanh",
            kernel_initializer=keras.initializers.TruncatedNormal(stddev=initializer_range),
            dtype=dtype,
            name="pooler",
        )

        # === Functional graph ===
        token_ids = keras.Input(shape=(None,), dtype="int32", name="token_ids")
        segment_ids = keras.Input(shape=(None,), dtype="int32", name="segment_ids")
        padding_mask = keras.Input(shape=(None,), dtype="int32", name="padding_mask")
        x = self._encode(token_ids, segment_ids, padding_mask)
        pooled = self.pooler(x[:, 0, :])
        super().__init__(
            inputs={
                "token_ids": token_ids,
                "segment_ids": segment_ids,
                "padding_mask": padding_mask,
            },
            outputs={"sequence_output": x, "pooled_output": pooled},
            **kwargs,
        )
        # A functional model does not take its dtype policy from `dtype=`.
        if dtype is not None:
            self.dtype_policy = keras.dtype_policies.get(dtype)

        # === Config ===
        self.vocabulary_size = vocabulary_size
        self.num_layers = num_layers
        self.num_heads = num_heads
        self.hidden_dim = hidden_dim
        self.intermediate_dim = intermediate_dim
        self.dropout = dropout
        self.attention_dropout = attention_dropout
        self.max_sequence_length = max_sequence_length
        self.num_segments = num_segments
        self.activation = activation
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range

    def _encode(self, token_ids, segment_ids, padding_mask, *, first_token_only=False, training=None):
        x = self.embeddings(token_ids, segment_ids, training=training)
        for block in self.encoder_blocks[:-1]:
            x = block(x, padding_mask, training=training)
        return self.encoder_blocks[-1](x, padding_mask, training=training, first_token_only=first_token_only)

    def pooled_output(self, inputs, training=None):
        """`backbone(inputs)["pooled_output"]`, the last block computing only the [CLS] row (which still
        attends to every token): for heads that read nothing else. Takes `keras.Input`s or real inputs.

        Example:
        >>> pooled = backbone.pooled_output(inputs)  # (batch, hidden_dim)
        """
        x = self._encode(
            inputs["token_ids"],
            inputs["segment_ids"],
            inputs["padding_mask"],
            first_token_only=True,
            training=training,
        )
        return self.pooler(x[:, 0, :])

    def packed_sequence_output(self, token_ids, segment_ids, sequence_ids, training=None):
        """The sequence output of packed rows, whose sequences are numbered in `sequence_ids` (1, 2, ...;
        0 for padding): each sequence gets the outputs it would get alone (`layers.packed_sequences`).
        Takes `keras.Input`s (as `BertPretrainer(packed=True)`) or real inputs.

        Example:
        >>> x = backbone.packed_sequence_output(token_ids, segment_ids, sequence_ids)  # (batch, seq, hidden)
        """
        mask = packed_attention_mask(sequence_ids)
        positions = packed_positions(sequence_ids)
        x = self.embeddings(token_ids, segment_ids, position_ids=positions, training=training)
        for block in self.encoder_blocks:
            x = block(x, mask, training=training)
        return x

    @property
    def token_embedding(self) -> keras.layers.Embedding:
        """The token embedding layer (its matrix is shared with the MLM head)."""
        return self.embeddings.token_embedding

    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "dtype": keras.dtype_policies.serialize(self.dtype_policy),
            "vocabulary_size": self.vocabulary_size,
            "num_layers": self.num_layers,
            "num_heads": self.num_heads,
            "hidden_dim": self.hidden_dim,
            "intermediate_dim": self.intermediate_dim,
            "dropout": self.dropout,
            "attention_dropout": self.attention_dropout,
            "max_sequence_length": self.max_sequence_length,
            "num_segments": self.num_segments,
            "activation": self.activation,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "initializer_range": self.initializer_range,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("dtype"), dict):
            config["dtype"] = keras.dtype_policies.deserialize(config["dtype"])
        return cls(**config)

    @classmethod
    def from_size(
        cls,
        size: str,
        *,
        vocabulary_size: int = BERT_UNCASED_VOCABULARY_SIZE,
        **kwargs,
    ) -> "BertBackbone":
        """A randomly initialised backbone of a standard size: "tiny", "mini", "small", "medium"
        (Turc et al. 2019), "base" or "large" (Devlin et al. 2019); `kwargs` override the rest.

        Example:
        >>> BertBackbone.from_size("base").count_params()
        109482240
        """
        return cls(vocabulary_size=vocabulary_size, **get_bert_size(size).backbone_kwargs(), **kwargs)

    @classmethod
    def from_preset(cls, preset: str, **kwargs) -> "BertBackbone":
        """Loads a backbone from a preset.

        `preset` is a local directory (a keras_bert3 preset, a Hugging Face BERT checkpoint with
        `config.json` and `model.safetensors`, or a keras-hub BERT preset), a remote handle
        (`hf://owner/name`, `kaggle://owner/model/framework/variant`) or a known preset name (downloaded
        through the hub client libraries). `kwargs` override config entries (e.g. `dropout=0.0`).

        Example:
        >>> backbone = BertBackbone.from_preset("path/to/all-MiniLM-L6-v2")
        """
        from keras_bert3.presets.preset_loader import load_backbone

        return load_backbone(preset, cls=cls, **kwargs)

    def save_to_preset(self, preset_dir: str) -> None:
        """Saves config and weights to a keras_bert3 preset directory.

        Example:
        >>> backbone.save_to_preset("my_bert")  # BertBackbone.from_preset("my_bert") loads it.
        """
        from keras_bert3.presets.preset_format import save_backbone

        save_backbone(self, preset_dir)


def check_vocabulary_sizes(backbone, tokenizer) -> None:
    """Raises when the tokenizer's ids do not index the backbone's embeddings."""
    if tokenizer.vocabulary_size() != backbone.vocabulary_size:
        raise ValueError(
            f"The tokenizer has {tokenizer.vocabulary_size():,} tokens but the backbone's token embedding has "
            f"{backbone.vocabulary_size:,} rows (its vocabulary_size): they come from different models. Load both "
            "from the same preset, or build the backbone with vocabulary_size=tokenizer.vocabulary_size()."
        )
