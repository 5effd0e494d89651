"""cuDNN's flash attention with dropout on the attention probabilities, through
JAX's private cuDNN module: JAX's public `jax.nn.dot_product_attention` has no
dropout.

The private function takes `dropout_rate` and a `seed` that is fixed when the
step is traced. XLA's cuDNN thunk keeps, for each call site, a random-number
offset that advances at every execution, so every step draws a new mask; the
backward call, executed once a step as well, regenerates its forward call's
mask from the same seed and offset. `bench/gpu_pretraining_step.py`'s
`check-fused` row checks both on a GPU: masks change from step to step, the
backward pass uses the forward pass's mask, and the keep rate is the one
asked for.

Each device of a data-parallel step keeps its own offset from the same seed,
so in one step every replica drops the same positions of its own examples.

Private API: `jax._src.cudnn.fused_attention_stablehlo.dot_product_attention`
(its `seed` and `dropout_rate` keywords) and `MaskType`.
"""

import inspect

import jax
import jax.numpy as jnp
from jax._src.cudnn import fused_attention_stablehlo as cudnn_attention

from keras_bert3.upstream.private_api import require_private

require_private(cudnn_attention, "dot_product_attention", package=jax, why="dropout inside cuDNN's attention")
require_private(cudnn_attention, "MaskType", package=jax, why="dropout inside cuDNN's attention")
for _keyword in ("seed", "dropout_rate"):
    if _keyword not in inspect.signature(cudnn_attention.dot_product_attention).parameters:
        raise ImportError(
            f"keras_bert3 relies on the `{_keyword}` keyword of jax._src.cudnn.fused_attention_stablehlo."
            f"dot_product_attention, which jax {jax.__version__} does not have (dropout inside cuDNN's "
            "attention). Install the earlier jax release that keras_bert3 was tested with, or report this."
        )


def cudnn_attention_with_dropout(query, key, value, allowed, *, dropout_rate: float, seed: int):
    """`fused_attention`'s context with `dropout_rate` of the probabilities
    dropped inside cuDNN's kernel: `query`, `key`, `value`
    `(batch, seq, heads, head_dim)` in bfloat16 or float16 on a GPU; `allowed`
    `(batch, keys)` (right padding: the keys' lengths) or
    `(batch, queries, keys)` (a mask).

    Example:
    >>> cudnn_attention_with_dropout(q, k, v, padding_mask, dropout_rate=0.1, seed=7).shape
    (8, 128, 16, 64)
    """
    batch, queries = query.shape[0], query.shape[1]
    scale = 1.0 / query.shape[-1] ** 0.5
    if allowed.ndim == 2:
        return cudnn_attention.dot_product_attention(
            query,
            key,
            value,
            q_seqlen=jnp.full((batch,), queries, "int32"),
            kv_seqlen=jnp.sum(allowed.astype("int32"), axis=1),
            scale=scale,
            mask_type=cudnn_attention.MaskType.PADDING,
            seed=int(seed),
            dropout_rate=float(dropout_rate),
        )
    mask = allowed[:, None, :, :].astype("bool")  # (batch, 1, queries, keys): the same for every head.
    return cudnn_attention.dot_product_attention(
        query, key, value, mask=mask, scale=scale, seed=int(seed), dropout_rate=float(dropout_rate)
    )
