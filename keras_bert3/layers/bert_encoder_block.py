"""One post-LayerNorm Transformer encoder block of BERT (Vaswani et al. 2017)."""

import zlib

import keras
from keras import ops

from keras_bert3.layers.activations import get_activation
from keras_bert3.layers.fast_mask_dropout import FastMaskDropout
from keras_bert3.layers.float32_accumulating_dense import Float32AccumulatingDense
from keras_bert3.layers.fused_layer_normalization import FusedLayerNormalization
from keras_bert3.ops.dense_product import dense_product_blocks
from keras_bert3.ops.dropout_add_layer_norm import dropout_add_layer_norm
from keras_bert3.ops.dropout_add_layer_norm import fused_dropout_add_layer_norm_runs
from keras_bert3.ops.feed_forward_activation import feed_forward_activation
from keras_bert3.ops.fused_attention import fused_attention
from keras_bert3.ops.fused_attention import fused_attention_available
from keras_bert3.ops.masked_softmax import masked_softmax
from keras_bert3.ops.split_heads import split_heads
from keras_bert3.ops.token_rows import from_token_rows
from keras_bert3.ops.token_rows import token_rows


@keras.saving.register_keras_serializable(package="keras_bert3")
class BertEncoderBlock(keras.layers.Layer):
    """Bidirectional self-attention and a feed-forward network, each followed by dropout, a residual
    connection and LayerNorm (post-LN, as in BERT).

    A JAX training step runs one fused attention kernel where it can; speed code is in `keras_bert3.ops`.

    Args:
        num_heads: int. Number of attention heads; must divide the input width.
        intermediate_dim: int. Width of the feed-forward hidden layer.
        dropout: float. Dropout on the attention and feed-forward outputs.
        attention_dropout: float or None. Dropout on the attention probabilities; `None` means the
            same as `dropout`. 0 lets a JAX training step use the fused kernel on a CPU too.
        activation: str. Feed-forward activation, see `layers.activations`.
        initializer_range: float. Stddev of the truncated normal initializer.

    Call args:
        x: float `(batch, seq, hidden)`.
        padding_mask: int or bool `(batch, seq)`, 1 for real tokens; or `(batch, seq, seq)`, 1 where a
            query may attend to a key (`packed_sequences.packed_attention_mask`).
        first_token_only: bool. Compute the first ([CLS]) token's output alone, `(batch, 1, hidden)`.

    Example:
    >>> block = BertEncoderBlock(num_heads=2, intermediate_dim=32)
    >>> block(np.ones((2, 5, 8)), np.ones((2, 5), "int32")).shape
    (2, 5, 8)
    """

    def __init__(
        self,
        num_heads: int,
        intermediate_dim: int,
        *,
        dropout: float = 0.1,
        attention_dropout: float | None = None,
        activation: str = "gelu",
        layer_norm_epsilon: float = 1e-12,
        initializer_range: float = 0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.intermediate_dim = intermediate_dim
        self.dropout = dropout
        self.attention_dropout = dropout if attention_dropout is None else attention_dropout
        self.activation = activation
        self.activation_fn = get_activation(activation)
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range

    def build(self, x_shape, padding_mask_shape=None):
        hidden_dim = x_shape[-1]
        if hidden_dim % self.num_heads:
            raise ValueError(
                f"hidden_dim={hidden_dim} is not divisible by num_heads="
                f"{self.num_heads}; choose sizes with hidden_dim % num_heads == 0."
            )
        self.head_dim = hidden_dim // self.num_heads

        def dense(units, name, activation=None):
            return Float32AccumulatingDense(
                units,
                activation=activation,
                kernel_initializer=keras.initializers.TruncatedNormal(stddev=self.initializer_range),
                dtype=self.dtype_policy,
                name=name,
            )

        def layer_norm(name):
            return FusedLayerNormalization(epsilon=self.layer_norm_epsilon, dtype=self.dtype_policy, name=name)

        self.qkv_dense = dense(3 * hidden_dim, "qkv")
        self.attention_output_dense = dense(hidden_dim, "attention_output")
        self.attention_layer_norm = layer_norm("attention_layer_norm")
        self.intermediate_dense = dense(self.intermediate_dim, "intermediate")
        self.output_dense = dense(hidden_dim, "output")
        self.output_layer_norm = layer_norm("output_layer_norm")

        # In this layer's dtype policy: an unset dtype (global float32) would cast bfloat16 back.
        def dropout(rate, name):
            return FastMaskDropout(rate, dtype=self.dtype_policy, name=name)

        self.probs_dropout = dropout(self.attention_dropout, "probs_dropout")
        self.attention_seed = self._kernel_dropout_seed()
        self.attention_output_dropout = dropout(self.dropout, "attention_output_dropout")
        self.output_dropout = dropout(self.dropout, "output_dropout")

        self.qkv_dense.build(x_shape)
        self.attention_output_dense.build(x_shape)
        self.attention_layer_norm.build(x_shape)
        self.intermediate_dense.build(x_shape)
        self.output_dense.build(tuple(x_shape[:-1]) + (self.intermediate_dim,))
        self.output_layer_norm.build(x_shape)

    def call(self, x, padding_mask, training=None, first_token_only=False):
        context = self._self_attention(x, padding_mask, training, first_token_only)
        if first_token_only:
            x = x[:, :1]
        # Each token on its own from here on: (tokens, hidden) rows where that is faster.
        shape = ops.shape(x)
        x, context = token_rows(x, training=training), token_rows(context, training=training)
        # Attention output, dropout, residual, LayerNorm.
        attended = self.attention_output_dense(context)
        x = self._dropout_add_layer_norm(
            x, attended, self.attention_output_dropout, self.attention_layer_norm, training
        )
        # Feed-forward: dense, activation, dense, dropout; residual, LayerNorm.
        hidden = feed_forward_activation(self.activation_fn, self.intermediate_dense(x), training=training)
        x = self._dropout_add_layer_norm(
            x, self.output_dense(hidden), self.output_dropout, self.output_layer_norm, training
        )
        return from_token_rows(x, shape)

    def _dropout_add_layer_norm(self, x, sublayer, dropout, layer_norm, training):
        """`layer_norm(x + dropout(sublayer))`: in a training step where `fused_dropout_add_layer_norm_runs()`, one
        fused kernel with the same masks and values."""
        if training and fused_dropout_add_layer_norm_runs():
            rate, seed = dropout.rate, getattr(dropout, "seed_generator", None)
            return dropout_add_layer_norm(
                x, sublayer, layer_norm.gamma, layer_norm.beta, layer_norm.epsilon, rate=rate, seed=seed
            )
        return layer_norm(x + dropout(sublayer, training=training), training=training)

    def _self_attention(self, x, padding_mask, training, first_token_only):
        """Multi-head self-attention: `(batch, queries, hidden)` (one query with `first_token_only`)."""
        batch_size, sequence_length = ops.shape(x)[0], ops.shape(x)[1]
        if training and not first_token_only and self._fused_attention_runs():
            heads_shape = (batch_size, sequence_length, self.num_heads, self.head_dim)
            rows = token_rows(x, training=training)
            kernel, bias = (ops.cast(w, rows.dtype) for w in (self.qkv_dense.kernel, self.qkv_dense.bias))
            query, key, value = (ops.reshape(t, heads_shape) for t in dense_product_blocks(rows, kernel, bias, 3))
            context = fused_attention(
                query, key, value, padding_mask, dropout_rate=self.attention_dropout, seed=self.attention_seed
            )
            return ops.reshape(context, (batch_size, sequence_length, self.num_heads * self.head_dim))
        qkv_shape = (batch_size, sequence_length, 3, self.num_heads, self.head_dim)
        qkv = ops.reshape(self.qkv_dense(token_rows(x, training=training)), qkv_shape)
        query, key, value = split_heads(qkv)  # (batch, heads, seq, head_dim) each.
        if first_token_only:
            query = query[:, :, :1]
        # Scaled before the matmul: the query is seq / head_dim times smaller than the scores.
        query = query * ops.cast(1.0 / self.head_dim**0.5, query.dtype)
        scores = ops.matmul(query, ops.swapaxes(key, -1, -2))
        # (batch, 1, 1, seq) from a padding mask, or (batch, 1, queries, seq) from an attention mask.
        if len(padding_mask.shape) == 3:
            allowed = padding_mask[:, None, :1, :] if first_token_only else padding_mask[:, None, :, :]
        else:
            allowed = padding_mask[:, None, None, :]
        probs = masked_softmax(scores, allowed, training=training)  # In the scores' (and values') dtype.
        if training and self.attention_dropout > 0:
            probs = self.probs_dropout(probs, training=training)
        context = ops.transpose(ops.matmul(probs, value), (0, 2, 1, 3))  # (batch, queries, heads, head_dim)
        return ops.reshape(context, (batch_size, ops.shape(query)[2], self.num_heads * self.head_dim))

    def _kernel_dropout_seed(self) -> int:
        """The fused kernel's dropout seed, fixed per block (cuDNN advances a counter each step): the
        first word of the probabilities' dropout seed, or, where that cannot be read, one from the name."""
        generator = getattr(self.probs_dropout, "seed_generator", None)
        try:
            return int(ops.convert_to_numpy(generator.state)[0])
        except Exception:  # No generator (rate 0), or built inside a traced function.
            return zlib.crc32(self.name.encode())

    def _fused_attention_runs(self) -> bool:
        """A training step runs `fused_attention` here (an unquantized `qkv` kernel)."""
        if self.qkv_dense.quantization_mode is not None:
            return False
        return fused_attention_available(self.attention_dropout, self.compute_dtype, self.head_dim)

    def compute_output_spec(self, x, padding_mask=None, training=None, first_token_only=False):
        shape = (x.shape[0], 1, x.shape[2]) if first_token_only else x.shape
        return keras.KerasTensor(shape, dtype=self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update(
            num_heads=self.num_heads,
            intermediate_dim=self.intermediate_dim,
            dropout=self.dropout,
            attention_dropout=self.attention_dropout,
            activation=self.activation,
            layer_norm_epsilon=self.layer_norm_epsilon,
            initializer_range=self.initializer_range,
        )
        return config
