"""cuDNN's flash attention with dropout on the attention probabilities (JAX's
public `jax.nn.dot_product_attention` has none).

The `seed` is fixed at trace time; XLA's cuDNN thunk advances a per-call-site offset at every execution, so each step
draws a new mask, the backward call regenerates it (`bench/gpu_pretraining_step.py check-fused`), and each data-parallel
replica drops the same positions. XLA aborts the process ("Check failed: local_device_ordinal.has_value()") where it
records such a call into a CUDA command buffer, as by default: dropout runs here only where XLA_FLAGS leaves cuDNN out
of them (`leave_cudnn_out_of_command_buffers`).

Private APIs (JAX): `jax._src.cudnn.fused_attention_stablehlo.dot_product_attention` (its `seed` and `dropout_rate`
keywords) and `MaskType`; `jax._src.xla_bridge.backends_are_initialized`."""

import inspect
import os

import jax
import jax.numpy as jnp
from jax._src import xla_bridge
from jax._src.cudnn import fused_attention_stablehlo as cudnn_attention

from keras_bert3.upstream.private_api import require_private

COMMAND_BUFFER_FLAG = "--xla_gpu_enable_command_buffer"

require_private(cudnn_attention, "dot_product_attention", package=jax, why="dropout inside cuDNN's attention")
require_private(cudnn_attention, "MaskType", package=jax, why="dropout inside cuDNN's attention")
require_private(xla_bridge, "backends_are_initialized", package=jax, why="XLA flags set before JAX starts")
for _keyword in ("seed", "dropout_rate"):
    if _keyword not in inspect.signature(cudnn_attention.dot_product_attention).parameters:
        raise ImportError(
            f"keras_bert3 relies on the `{_keyword}` keyword of jax._src.cudnn.fused_attention_stablehlo."
            f"dot_product_attention, which jax {jax.__version__} does not have (dropout inside cuDNN's "
            "attention). Install the earlier jax release that keras_bert3 was tested with, or report this."
        )


def cudnn_attention_with_dropout(query, key, value, allowed, *, dropout_rate: float, seed: int):
    """`fused_attention`'s context with `dropout_rate` of the probabilities dropped
    in cuDNN: `query`, `key`, `value` `(batch, seq, heads, head_dim)`, bfloat16 or
    float16 on a GPU; `allowed` `(batch, keys)` (right padding) or `(batch, queries, keys)`."""
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


def dropout_runs_in_cudnn() -> bool:
    """Whether XLA_FLAGS' `--xla_gpu_enable_command_buffer` leaves out `CUDNN`,
    without which the kernel's dropout aborts the process."""
    values = [
        flag.split("=", 1)[1]
        for flag in os.environ.get("XLA_FLAGS", "").split()
        if flag.startswith(COMMAND_BUFFER_FLAG + "=")
    ]
    if not values:
        return False  # XLA's default command buffers take cuDNN's calls.
    items = [item.strip().upper() for item in values[-1].split(",") if item.strip()]
    if any(item[0] in "+-" for item in items):  # Changes to XLA's default list: the last word on CUDNN wins.
        changes = [item for item in items if item[1:] == "CUDNN"]
        return bool(changes) and changes[-1] == "-CUDNN"
    return "CUDNN" not in items  # A list of its own (empty: no command buffers at all).


def leave_cudnn_out_of_command_buffers() -> bool:
    """Adds `--xla_gpu_enable_command_buffer=-CUDNN` to XLA_FLAGS unless a command-buffer flag is set or JAX's backends
    have started (XLA reads its flags then); returns `dropout_runs_in_cudnn()`."""
    flags = os.environ.get("XLA_FLAGS", "")
    if COMMAND_BUFFER_FLAG not in flags and not xla_bridge.backends_are_initialized():
        os.environ["XLA_FLAGS"] = f"{flags} {COMMAND_BUFFER_FLAG}=-CUDNN".strip()
    return dropout_runs_in_cudnn()
