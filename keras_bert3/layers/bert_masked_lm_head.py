"""BERT's masked language model head, tied to the token embedding matrix."""

import keras
from keras import ops

from keras_bert3.layers.activations import get_activation
from keras_bert3.layers.float32_accumulating_dense import Float32AccumulatingDense
from keras_bert3.ops.dense_product import dense_product


@keras.saving.register_keras_serializable(package="keras_bert3")
class BertMaskedLMHead(keras.layers.Layer):
    """Predicts the tokens at the masked positions only.

    As in Devlin et al. 2019 (Hugging Face's `cls.predictions`): the hidden states at `mask_positions` go through a
    dense layer, the activation and a LayerNorm, then the transposed token embedding matrix plus a per-token bias.

    Args:
        token_embedding: the backbone's `keras.layers.Embedding`, whose matrix is the output projection.
        activation: str. See `layers.activations`.
        initializer_range: float. Stddev of the truncated normal initializer.

    Call args:
        sequence_output: float `(batch, seq, hidden)`.
        mask_positions: int `(batch, predictions)`, indices into `seq`.
    Returns: logits `(batch, predictions, vocabulary_size)`.

    Example:
    >>> head = BertMaskedLMHead(backbone.token_embedding)
    >>> logits = head(outputs["sequence_output"], np.array([[1, 3]]))
    """

    def __init__(
        self,
        token_embedding: keras.layers.Embedding,
        *,
        activation: str = "gelu",
        layer_norm_epsilon: float = 1e-12,
        initializer_range: float = 0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.token_embedding = token_embedding
        self.activation = activation
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range

    @classmethod
    def of_backbone(cls, backbone, name: str = "masked_lm_head") -> "BertMaskedLMHead":
        """The head of `backbone`: tied to its token embedding, with its activation, LayerNorm epsilon, initializer
        and dtype policy (`BertPretrainer`'s and `BertMaskedLM`'s, whose presets store it under `name`)."""
        return cls(
            backbone.token_embedding,
            activation=backbone.activation,
            layer_norm_epsilon=backbone.layer_norm_epsilon,
            initializer_range=backbone.initializer_range,
            dtype=backbone.dtype_policy,
            name=name,
        )

    def build(self, sequence_output_shape, mask_positions_shape=None):
        hidden_dim = sequence_output_shape[-1]
        self.dense = Float32AccumulatingDense(
            hidden_dim,
            activation=get_activation(self.activation),
            kernel_initializer=keras.initializers.TruncatedNormal(stddev=self.initializer_range),
            dtype=self.dtype_policy,
            name="dense",
        )
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, dtype=self.dtype_policy, name="layer_norm"
        )
        self.dense.build((None, None, hidden_dim))
        self.layer_norm.build((None, None, hidden_dim))
        self.output_bias = self.add_weight(
            name="output_bias",
            shape=(self.token_embedding.input_dim,),
            initializer="zeros",
        )

    def call(self, sequence_output, mask_positions):
        # (batch, predictions, hidden)
        hidden = ops.take_along_axis(sequence_output, ops.cast(mask_positions, "int32")[:, :, None], axis=1)
        hidden = self.layer_norm(self.dense(hidden))
        embeddings = ops.cast(self.token_embedding.embeddings, hidden.dtype)  # (vocabulary, hidden)
        return dense_product(hidden, embeddings, ops.cast(self.output_bias, hidden.dtype), transpose_kernel=True)

    def compute_output_shape(self, sequence_output_shape, mask_positions_shape):
        return tuple(mask_positions_shape) + (self.token_embedding.input_dim,)

    def get_config(self):
        # The token embedding is not serialised: the owner passes it again.
        config = super().get_config()
        config.update(
            activation=self.activation,
            layer_norm_epsilon=self.layer_norm_epsilon,
            initializer_range=self.initializer_range,
        )
        return config
