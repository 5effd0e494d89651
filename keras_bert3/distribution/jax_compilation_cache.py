"""JAX's persistent compilation cache, on by default: the XLA programs a run
compiles (training, evaluation and prediction steps) are kept on disk, so
that running the same job again compiles nothing.

The first `compile()` of a keras_bert3 model (`BertPretrainer`, a task) on
the JAX backend points JAX's cache at
`~/.cache/keras_bert3/jax_compilation_cache` (`$XDG_CACHE_HOME` respected):
importing keras_bert3 changes no setting of JAX's, and a process that never
compiles one of its models keeps JAX's own defaults. JAX reads the folder
when it first looks the cache up, so programs compiled before (the model's
weight initialisation) are not kept, and the steps `fit` compiles are. The
user's own choice of a cache wins (`JAX_COMPILATION_CACHE_DIR`, or
`jax.config.update("jax_compilation_cache_dir", ...)` before the compile). The
environment variable `KERAS_BERT3_COMPILATION_CACHE` moves it (a folder) or
turns it off (`off`). A folder that cannot be written gives a one-line
warning and no cache: the cache saves time, it is never a reason to fail.

The cache is trusted code: JAX runs what it finds there, so it lives in the
user's own cache folder, never a shared one.
"""

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
    """Points JAX's persistent compilation cache at keras_bert3's folder
    (see the module's docstring) and caches every program, however quick
    to compile; returns the folder in use, or None (off, not JAX, or not writable).
    """
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
