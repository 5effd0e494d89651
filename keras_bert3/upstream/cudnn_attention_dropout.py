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

XLA (jax 0.11.2) aborts the process when it records such a call into a CUDA
command buffer ("Check failed: local_device_ordinal.has_value()" in
`CudnnGraph::PackOperands`), which it does by default; run outside command
buffers, each execution advances the offset as above. So the kernel's dropout
is used only where XLA_FLAGS leaves cuDNN out of command buffers
(`dropout_runs_in_cudnn`); `leave_cudnn_out_of_command_buffers` sets that
flag before JAX starts, as `keras-bert3` commands do.

Private API: `jax._src.cudnn.fused_attention_stablehlo.dot_product_attention`
(its `seed` and `dropout_rate` keywords) and `MaskType`;
`jax._src.xla_bridge.backends_are_initialized`.
"""

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
    """`fused_attention`'s context with `dropout_rate` of the probabilities
    dropped inside cuDNN's kernel: `query`, `key`, `value`
    `(batch, seq, heads, head_dim)` in bfloat16 or float16 on a GPU; `allowed`
    `(batch, keys)` (right padding: the keys' lengths) or
    `(batch, queries, keys)` (a mask).
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


def dropout_runs_in_cudnn() -> bool:
    """Whether XLA_FLAGS keeps cuDNN's calls out of XLA's command buffers
    (its `--xla_gpu_enable_command_buffer` leaves out `CUDNN`): only then can
    the attention kernel drop probabilities without aborting the process.
    """
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
    """Adds `--xla_gpu_enable_command_buffer=-CUDNN` to XLA_FLAGS where no
    command-buffer flag is set and JAX has not started its backends yet (XLA
    reads its flags then); whether cuDNN's calls now stay out of command
    buffers (`dropout_runs_in_cudnn`).
    """
    flags = os.environ.get("XLA_FLAGS", "")
    if COMMAND_BUFFER_FLAG not in flags and not xla_bridge.backends_are_initialized():
        os.environ["XLA_FLAGS"] = f"{flags} {COMMAND_BUFFER_FLAG}=-CUDNN".strip()
    return dropout_runs_in_cudnn()
