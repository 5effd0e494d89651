"""The `keras-bert3` command's process (`python -m keras_bert3`) starts without libraries that Keras
and TensorFlow import only because they are installed: IPython, scikit-learn, matplotlib, and JAX under
the TensorFlow backend. Both import them inside `try`, so they load without them; a command that needs
one (`evaluate`'s report, training curves, an export from JAX) imports it later, whole. Only a `-m`
module named `keras_bert3...` does this: `import keras_bert3` (pytest, a notebook) gets Keras as usual.
"""

import contextlib
import os
import sys

UNUSED_BY_COMMANDS = ("IPython", "sklearn", "matplotlib")


def started_as_a_command() -> bool:
    """True while `python -m keras_bert3...` imports the packages of its
    module: Python sets `sys.argv[0]` to "-m" until it has found it."""
    if sys.argv[:1] != ["-m"] or "-m" not in sys.orig_argv:
        return False
    module = sys.orig_argv[sys.orig_argv.index("-m") + 1 :][:1]
    return bool(module) and module[0].startswith("keras_bert3")


@contextlib.contextmanager
def unused_libraries_left_out():
    """In a command's process, importing a library of UNUSED_BY_COMMANDS (and JAX under the
    TensorFlow backend) not yet imported raises ImportError inside the block; after it, as usual."""
    names = UNUSED_BY_COMMANDS + (("jax",) if os.environ.get("KERAS_BACKEND") == "tensorflow" else ())
    left_out = [name for name in names if name not in sys.modules] if started_as_a_command() else []
    for name in left_out:
        sys.modules[name] = None  # Python's own marker: `import name` raises ImportError.
    try:
        yield
    finally:
        for name in left_out:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
