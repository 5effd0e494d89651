"""The encoder block's "dropout, residual, LayerNorm" as one kernel on a JAX GPU: `LayerNorm(x + dropout(sublayer))`,
forward and backward each one Pallas (Triton) kernel over blocks of rows. The masks are `ops.dropout`'s hashed masks,
recomputed in the backward pass instead of kept, so the fused path draws the unfused path's masks and gives its values.
"""

import functools

import keras
from keras import ops

from keras_bert3.ops.dropout import dropout
from keras_bert3.ops.layer_norm import layer_norm_reference

# Elements a program holds (its rows times the row's width rounded up to a power of two): Triton's LayerNorm tutorial
# holds one row of up to 64 KB a program; a few rows of BERT's widths (128 to 1,024) keep a program's work alike.
ELEMENTS_PER_PROGRAM = 4096


# Off until measured faster than XLA's own fusions on a GPU (issue 97); `enable_fused_dropout_add_layer_norm` turns it on.
_FUSED = {"mode": None}


def enable_fused_dropout_add_layer_norm(interpret: bool = False) -> None:
    """Encoder blocks' training steps on JAX run `dropout_add_layer_norm`'s fused kernels from now on: on GPUs, or,
    with `interpret`, on any device in Pallas' interpreter (slow: for tests)."""
    _FUSED["mode"] = "interpret" if interpret else "kernel"


def disable_fused_dropout_add_layer_norm() -> None:
    """Back to the unfused ops (the default)."""
    _FUSED["mode"] = None


def fused_dropout_add_layer_norm_runs() -> bool:
    """Whether a training step runs the fused kernels here: turned on, on JAX, and on a GPU unless interpreted."""
    from keras_bert3.distribution.devices import accelerator_type

    mode = _FUSED["mode"]
    if mode is None or keras.backend.backend() != "jax":
        return False
    return mode == "interpret" or accelerator_type() == "gpu"


def dropout_add_layer_norm(x, sublayer, gamma, beta, epsilon: float, *, rate: float, seed):
    """`dropout_add_layer_norm_reference`'s values (within float32 rounding, with the same masks) from the fused
    kernels: one Pallas kernel forward and one backward, for JAX where `fused_dropout_add_layer_norm_runs()`."""
    import jax.numpy as jnp

    from keras_bert3.ops.dropout import hashed_mask_key

    key = hashed_mask_key(seed.next()) if rate > 0 else jnp.uint32(0)
    x, sublayer, gamma, beta = (ops.convert_to_tensor(value) for value in (x, sublayer, gamma, beta))
    rows = x.reshape(-1, x.shape[-1])
    fused = _fused(float(epsilon), float(rate), _FUSED["mode"] == "interpret")
    return fused(rows, sublayer.reshape(rows.shape).astype(x.dtype), gamma, beta, key).reshape(x.shape)


def dropout_add_layer_norm_reference(x, sublayer, gamma, beta, epsilon: float, *, rate: float, seed):
    """`LayerNorm(x + dropout(sublayer))` over the last axis, scaled by `gamma` and shifted by `beta`, in `x`'s dtype,
    with `ops.dropout` and `ops.layer_norm`'s reference. `rate` 0 means no dropout; otherwise `seed` (a
    `keras.random.SeedGenerator`) advances once.

    Example:
    >>> dropout_add_layer_norm_reference(
    ...     np.ones((2, 8), "float32"), np.ones((2, 8), "float32"), np.ones(8), np.zeros(8), 1e-12, rate=0.0, seed=None
    ... ).shape
    (2, 8)
    """
    if rate > 0:
        sublayer = dropout(sublayer, rate, seed=seed)
    return layer_norm_reference(ops.convert_to_tensor(x) + sublayer, gamma, beta, epsilon)


def _blocks(rows: int, width: int) -> tuple[int, int]:
    """The kernels' block: `(rows per program, the row's width rounded up to a power of two)`; the rows per program a
    power of two that divides `rows`."""
    padded = 1 << (width - 1).bit_length()
    block = max(1, ELEMENTS_PER_PROGRAM // padded)
    while rows % block:
        block //= 2
    return block, padded


@functools.cache
def _fused(epsilon: float, rate: float, interpret: bool):
    """The custom-gradient JAX function of `(rows, sublayer, gamma, beta, key)` for one epsilon, rate and mode."""
    import jax

    forward = functools.partial(_forward, epsilon=epsilon, rate=rate, interpret=interpret)
    backward = functools.partial(_backward, rate=rate, interpret=interpret)

    @jax.custom_vjp
    def fused(x, sublayer, gamma, beta, key):
        return forward(x, sublayer, gamma, beta, key)[0]

    fused.defvjp(forward, backward)
    return fused


def _forward(x, sublayer, gamma, beta, key, *, epsilon, rate, interpret):
    """The forward kernel over `(rows, width)` inputs: the output, and what the backward kernel reads."""
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    rows, width = x.shape
    tile, row, per_row, key_spec, params = _specs(rows, width, interpret)
    y, rstd = pl.pallas_call(
        functools.partial(_forward_kernel, width=width, rate=rate, epsilon=epsilon),
        out_shape=(jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct((rows,), jnp.float32)),
        in_specs=[tile, tile, row, row, key_spec],
        out_specs=(tile, per_row),
        **params,
    )(x, sublayer, gamma.reshape(1, width), beta.reshape(1, width), key.reshape(1))
    return y, (x, sublayer, gamma, beta, key, rstd)


def _backward(saved, dy, *, rate, interpret):
    """The backward kernel: the gradients of `x`, `sublayer`, `gamma` and `beta` (each program's share of gamma's and
    beta's summed here), none for the key."""
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    x, sublayer, gamma, beta, key, rstd = saved
    rows, width = x.shape
    tile, row, per_row, key_spec, params = _specs(rows, width, interpret)
    programs = params["grid"][0]
    partial_row = pl.BlockSpec((1, row.block_shape[1]), lambda i: (i, 0))
    dx, ds, dgamma, dbeta = pl.pallas_call(
        functools.partial(_backward_kernel, width=width, rate=rate),
        out_shape=(
            jax.ShapeDtypeStruct(x.shape, x.dtype),
            jax.ShapeDtypeStruct(sublayer.shape, sublayer.dtype),
            jax.ShapeDtypeStruct((programs, width), jnp.float32),
            jax.ShapeDtypeStruct((programs, width), jnp.float32),
        ),
        in_specs=[tile, tile, row, key_spec, per_row, tile],
        out_specs=(tile, tile, partial_row, partial_row),
        **params,
    )(x, sublayer, gamma.reshape(1, width), key.reshape(1), rstd, dy)
    return dx, ds, jnp.sum(dgamma, axis=0).astype(gamma.dtype), jnp.sum(dbeta, axis=0).astype(beta.dtype), None


def _specs(rows: int, width: int, interpret: bool):
    """The kernels' blocks (a tile of rows, gamma's or beta's row, a value per row, the key) and call settings."""
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import triton as plt

    block, padded = _blocks(rows, width)
    tile = pl.BlockSpec((block, padded), lambda i: (i, 0))
    row = pl.BlockSpec((1, padded), lambda i: (0, 0))
    per_row = pl.BlockSpec((block,), lambda i: (i,))
    key = pl.BlockSpec((1,), lambda i: (0,))
    params = {
        "grid": (rows // block,),
        "interpret": interpret,
        "compiler_params": plt.CompilerParams(num_warps=4, num_stages=1),
    }
    return tile, row, per_row, key, params


def _tile_values(x_ref, s_ref, key_ref, width: int, rate: float):
    """The program's `z = x + dropout(sublayer)` centred on its rows' means, in float32, zero outside the rows' real
    columns (recomputed by the backward kernel, not kept); its mask and its real columns."""
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import triton as plt

    from keras_bert3.ops.dropout import hashed_keep

    block, padded = x_ref.shape
    row = pl.program_id(0) * block + jax.lax.broadcasted_iota(jnp.int32, (block, padded), 0)
    column = jax.lax.broadcasted_iota(jnp.int32, (block, padded), 1)
    real = column < width
    keep = hashed_keep((row * width + column).astype(jnp.uint32), key_ref[0], rate)
    x = plt.load(x_ref, mask=real, other=0.0).astype(jnp.float32)
    sublayer = plt.load(s_ref, mask=real, other=0.0).astype(jnp.float32)
    z = x + jnp.where(keep, sublayer / (1.0 - rate), 0.0)
    mean = jnp.sum(z, axis=1) / width
    return jnp.where(real, z - mean[:, None], 0.0), keep, real


def _row_values(ref, padded: int, width: int):
    """A `(1, padded)` row (gamma's, beta's) in float32, zero past `width`; and which of its columns are real."""
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import triton as plt

    real = jax.lax.broadcasted_iota(jnp.int32, (1, padded), 1) < width
    return plt.load(ref, mask=real, other=0.0).astype(jnp.float32), real


def _forward_kernel(x_ref, s_ref, gamma_ref, beta_ref, key_ref, y_ref, rstd_ref, *, width, rate, epsilon):
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import triton as plt

    centred, _, real = _tile_values(x_ref, s_ref, key_ref, width, rate)
    rstd = jax.lax.rsqrt(jnp.sum(centred * centred, axis=1) / width + epsilon)
    gamma, _ = _row_values(gamma_ref, x_ref.shape[1], width)
    beta, _ = _row_values(beta_ref, x_ref.shape[1], width)
    plt.store(y_ref, (centred * rstd[:, None] * gamma + beta).astype(y_ref.dtype), mask=real)
    rstd_ref[...] = rstd


def _backward_kernel(
    x_ref, s_ref, gamma_ref, key_ref, rstd_ref, dy_ref, dx_ref, ds_ref, dgamma_ref, dbeta_ref, *, width, rate
):
    import jax.numpy as jnp
    from jax.experimental.pallas import triton as plt

    centred, keep, real = _tile_values(x_ref, s_ref, key_ref, width, rate)
    rstd = rstd_ref[...][:, None]
    normal = centred * rstd
    gamma, real_row = _row_values(gamma_ref, x_ref.shape[1], width)
    dy = plt.load(dy_ref, mask=real, other=0.0).astype(jnp.float32)
    scaled = dy * gamma
    mean_scaled = jnp.sum(scaled, axis=1, keepdims=True) / width
    mean_scaled_normal = jnp.sum(scaled * normal, axis=1, keepdims=True) / width
    dz = jnp.where(real, (scaled - mean_scaled - normal * mean_scaled_normal) * rstd, 0.0)
    plt.store(dx_ref, dz.astype(dx_ref.dtype), mask=real)
    plt.store(ds_ref, jnp.where(keep, dz / (1.0 - rate), 0.0).astype(ds_ref.dtype), mask=real)
    plt.store(dgamma_ref, jnp.sum(dy * normal, axis=0, keepdims=True), mask=real_row)
    plt.store(dbeta_ref, jnp.sum(dy, axis=0, keepdims=True), mask=real_row)
