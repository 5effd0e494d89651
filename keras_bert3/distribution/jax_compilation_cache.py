"""JAX's persistent compilation cache, so that a job run again compiles nothing:
on from a keras_bert3 model's first `compile()` (importing keras_bert3 changes
no JAX setting), in `default_cache_dir()`. The user's own
`JAX_COMPILATION_CACHE_DIR` or `jax.config` wins; `KERAS_BERT3_COMPILATION_CACHE`
moves it (a folder) or turns it off (`off`). JAX runs what the cache holds: it
is never in a shared folder."""

import os
import tempfile
import warnings

ENVIRONMENT_VARIABLE = "KERAS_BERT3_COMPILATION_CACHE"
OFF = ("0", "off", "false", "no", "none")


def default_cache_dir() -> str:
    """`$XDG_CACHE_HOME/keras_bert3/jax_compilation_cache` (`~/.cache/...` without it)."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "keras_bert3", "jax_compilation_cache")


def enable_jax_compilation_cache() -> str | None:
    """Points JAX's compilation cache at keras_bert3's folder (see the module docstring), caching every program however
    quick to compile; returns the folder, or None (off, not JAX, or not writable)."""
    import keras

    if keras.backend.backend() != "jax":
        return None
    import jax

    chosen = jax.config.jax_compilation_cache_dir
    if chosen:  # The user's own choice (JAX_COMPILATION_CACHE_DIR or jax.config) wins.
        return chosen
    setting = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if setting.lower() in OFF and setting:
        return None
    path = os.path.abspath(os.path.expanduser(setting or default_cache_dir()))
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".write_check_"):
            pass
    except OSError as error:
        warnings.warn(
            f"keras_bert3: JAX's compilation cache is off: {path} cannot be written ({error.strerror or error}). "
            f"Set {ENVIRONMENT_VARIABLE} to a writable folder, or to 'off' to silence this.",
            stacklevel=2,
        )
        return None
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    return path
