"""Self-attention as one fused kernel on JAX: `jax.nn.dot_product_attention`, cuDNN's flash attention
on NVIDIA GPUs (`_cudnn_takes`), XLA's attention elsewhere. Dropout on the probabilities runs only
inside cuDNN (`upstream/cudnn_attention_dropout.py`). Keras' `ops.dot_product_attention` passes
neither the keys' lengths, nor a per-row mask in cuDNN's shape, nor dropout.
"""

import functools

import keras
from keras import ops


def fused_attention_available(dropout_rate: float = 0.0, dtype: str = "float32", head_dim: int = 64) -> bool:
    """Whether `fused_attention` runs here (JAX) for queries of `dtype` and `head_dim` with
    `dropout_rate`; dropout needs cuDNN and its XLA_FLAGS (`upstream/cudnn_attention_dropout.py`)."""
    if keras.backend.backend() != "jax":
        return False
    if dropout_rate == 0:
        return True
    if not _cudnn_takes(keras.backend.standardize_dtype(dtype), head_dim):
        return False
    from keras_bert3.upstream.cudnn_attention_dropout import dropout_runs_in_cudnn

    return dropout_runs_in_cudnn()


def fused_attention(query, key, value, allowed, *, dropout_rate: float = 0.0, seed: int = 0):
    """Softmax attention of `query` over `key`/`value`, each `(batch, seq, heads, head_dim)`, scaled by
    `1/sqrt(head_dim)`: the context `(batch, queries, heads, head_dim)` in `query`'s dtype.

    `allowed`: `(batch, keys)`, 1 for the real tokens, which must come first (right padding); or
    `(batch, queries, keys)`, 1 where a query may attend to a key. A query with no allowed key gets
    an output no loss should read. With `dropout_rate` (see `fused_attention_available`), `seed`
    (an int per call site) and a counter advanced at every execution of the compiled step choose the mask.
    """
    import jax
    import jax.numpy as jnp

    allowed = jnp.asarray(allowed)
    if dropout_rate > 0:
        if not _cudnn_runs(query):
            raise ValueError(
                f"fused_attention with dropout_rate={dropout_rate} needs cuDNN (a GPU, bfloat16 or float16 "
                f"queries with a head size that is a multiple of 8 up to 256), not {query.dtype} on "
                f"{jax.default_backend()}; check `fused_attention_available` first."
            )
        from keras_bert3.upstream.cudnn_attention_dropout import cudnn_attention_with_dropout
        from keras_bert3.upstream.cudnn_attention_dropout import dropout_runs_in_cudnn

        if not dropout_runs_in_cudnn():
            raise ValueError(
                "fused_attention with dropout needs XLA to keep cuDNN's calls out of command buffers "
                "(XLA aborts the process otherwise): set XLA_FLAGS=--xla_gpu_enable_command_buffer=-CUDNN "
                "before JAX starts."
            )
        return cudnn_attention_with_dropout(query, key, value, allowed, dropout_rate=dropout_rate, seed=seed)
    implementation = "cudnn" if _cudnn_runs(query) else "xla"
    if allowed.ndim == 2:
        lengths = jnp.sum(allowed.astype("int32"), axis=1)
        return jax.nn.dot_product_attention(
            query, key, value, key_value_seq_lengths=lengths, implementation=implementation
        )
    mask = allowed[:, None, :, :].astype("bool")  # (batch, 1, queries, keys): the same for every head.
    return jax.nn.dot_product_attention(query, key, value, mask=mask, implementation=implementation)


def split_token_major(qkv):
    """Deprecated: `tuple(keras.ops.unstack(qkv, 3, axis=2))`, which this returns."""
    from keras_bert3.renamed import warn_renamed

    warn_renamed("keras_bert3.ops.fused_attention.split_token_major", "keras.ops.unstack(qkv, 3, axis=2)")
    return tuple(ops.unstack(qkv, 3, axis=2))


def _cudnn_runs(query) -> bool:
    """cuDNN's flash attention takes this query."""
    return _cudnn_takes(keras.backend.standardize_dtype(query.dtype), query.shape[-1])


def _cudnn_takes(dtype: str, head_dim: int) -> bool:
    """cuDNN's flash attention takes queries of `dtype` and `head_dim`: a GPU, bfloat16 or float16,
    a head size that is a multiple of 8 up to 256."""
    return _on_gpu() and dtype in ("bfloat16", "float16") and head_dim % 8 == 0 and head_dim <= 256


@functools.cache
def _on_gpu() -> bool:
    import jax

    return jax.default_backend() == "gpu"


def attention_reference(query, key, value, allowed):
    """`fused_attention` with `keras.ops` (the encoder block's arithmetic): the tests' oracle."""
    from keras_bert3.ops.masked_softmax import masked_softmax_reference

    query, key, value = (ops.transpose(t, (0, 2, 1, 3)) for t in (query, key, value))
    scale = ops.cast(1.0 / query.shape[-1] ** 0.5, query.dtype)
    scores = ops.matmul(query * scale, ops.swapaxes(key, -1, -2))
    allowed = ops.convert_to_tensor(allowed)
    allowed = allowed[:, None, None, :] if len(allowed.shape) == 2 else allowed[:, None, :, :]
    probs = masked_softmax_reference(scores, allowed)
    return ops.transpose(ops.matmul(probs, value), (0, 2, 1, 3))
