"""BERT's input embeddings: token + segment + learned position, then LayerNorm."""

import keras
from keras import ops

from keras_bert3.layers.fast_mask_dropout import FastMaskDropout
from keras_bert3.layers.fused_layer_normalization import FusedLayerNormalization


@keras.saving.register_keras_serializable(package="keras_bert3")
class BertEmbeddings(keras.layers.Layer):
    """Sums token, segment and position embeddings, then LayerNorm and dropout (Devlin et al. 2019,
    section 3, "Input/Output Representations").

    Args:
        vocabulary_size, hidden_dim: int. Number of WordPiece tokens; width of the embeddings.
        max_sequence_length, num_segments: int. Numbers of learned positions and of segment ids.
        dropout: float. Dropout applied after the LayerNorm.
        initializer_range: float. Stddev of the truncated normal initializer.

    Call args:
        token_ids, segment_ids: int `(batch, seq)`.
        position_ids: optional int `(batch, seq)` (packed rows restart them per sequence); default
            0, 1, 2, ... along the row.
    Returns: float `(batch, seq, hidden_dim)`.

    Example:
    >>> layer = BertEmbeddings(vocabulary_size=100, hidden_dim=8)
    >>> layer(np.ones((2, 5), "int32"), np.zeros((2, 5), "int32")).shape
    (2, 5, 8)
    """

    def __init__(
        self,
        vocabulary_size: int,
        hidden_dim: int,
        *,
        max_sequence_length: int = 512,
        num_segments: int = 2,
        dropout: float = 0.1,
        layer_norm_epsilon: float = 1e-12,
        initializer_range: float = 0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.vocabulary_size = vocabulary_size
        self.hidden_dim = hidden_dim
        self.max_sequence_length = max_sequence_length
        self.num_segments = num_segments
        self.dropout = dropout
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range

        initializer = keras.initializers.TruncatedNormal(stddev=initializer_range)
        self.token_embedding = keras.layers.Embedding(
            vocabulary_size,
            hidden_dim,
            embeddings_initializer=initializer,
            dtype=self.dtype_policy,
            name="token_embedding",
        )
        self.segment_embedding = keras.layers.Embedding(
            num_segments,
            hidden_dim,
            embeddings_initializer=initializer,
            dtype=self.dtype_policy,
            name="segment_embedding",
        )
        self.position_embedding = keras.layers.Embedding(
            max_sequence_length,
            hidden_dim,
            embeddings_initializer=initializer,
            dtype=self.dtype_policy,
            name="position_embedding",
        )
        self.layer_norm = FusedLayerNormalization(
            epsilon=layer_norm_epsilon, dtype=self.dtype_policy, name="layer_norm"
        )
        self.dropout_layer = FastMaskDropout(dropout, dtype=self.dtype_policy, name="dropout")

    def build(self, token_ids_shape, segment_ids_shape=None, position_ids_shape=None):
        self.token_embedding.build(token_ids_shape)
        self.segment_embedding.build(token_ids_shape)
        self.position_embedding.build(token_ids_shape)
        self.layer_norm.build(tuple(token_ids_shape) + (self.hidden_dim,))

    def call(self, token_ids, segment_ids, position_ids=None, training=None):
        sequence_length = token_ids.shape[1]
        # Symbolic lengths (jax2tf shape polymorphism) cannot be compared; given positions (packed rows) can be fewer.
        if position_ids is None and isinstance(sequence_length, int) and sequence_length > self.max_sequence_length:
            raise ValueError(
                f"The input has {sequence_length} tokens per sequence but this "
                f"model has only {self.max_sequence_length} positions. Truncate "
                f"the inputs (e.g. the tokenizer's `sequence_length="
                f"{self.max_sequence_length}`)."
            )
        x = self.token_embedding(token_ids) + self.segment_embedding(segment_ids)
        if position_ids is None:
            positions = self.position_embedding.embeddings[: ops.shape(token_ids)[1]][None, :, :]
        else:
            positions = self.position_embedding(position_ids)
        x = x + ops.cast(positions, x.dtype)
        x = self.layer_norm(x, training=training)
        return self.dropout_layer(x, training=training)

    def compute_output_shape(self, token_ids_shape, segment_ids_shape=None, position_ids_shape=None):
        return tuple(token_ids_shape) + (self.hidden_dim,)

    def get_config(self):
        config = super().get_config()
        config.update(
            vocabulary_size=self.vocabulary_size,
            hidden_dim=self.hidden_dim,
            max_sequence_length=self.max_sequence_length,
            num_segments=self.num_segments,
            dropout=self.dropout,
            layer_norm_epsilon=self.layer_norm_epsilon,
            initializer_range=self.initializer_range,
        )
        return config
