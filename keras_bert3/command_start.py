"""The `keras-bert3` command's process (`python -m keras_bert3`) starts
without the libraries that Keras and TensorFlow import only because they are
installed, and that no command uses:

- IPython (with jedi and prompt_toolkit): Keras' display of a saved file's
  contents in a notebook;
- scikit-learn: Keras' scikit-learn wrappers;
- matplotlib's pyplot: `keras.visualization`;
- JAX, where `KERAS_BACKEND` is `tensorflow`: TensorFlow Lite's converter of
  JAX functions.

Keras and TensorFlow import each of them inside `try`, so they load without
them, and the process starts in about half the CPU time. The libraries are
left out only while the package itself is imported: a command that uses one
(`evaluate`'s report, scikit-learn; the training curves, matplotlib; an
export from JAX) imports it then, whole.

A program that imports keras_bert3 (`import keras_bert3`, pytest, a notebook)
gets Keras as usual: the libraries are left out only while Python locates the
`__main__` of a `-m` module whose name starts with `keras_bert3`.
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
    """In a command's process (`started_as_a_command`), `import` of each
    library of UNUSED_BY_COMMANDS (and JAX under the TensorFlow backend) not
    yet imported raises ImportError inside the block; after it, each imports
    as usual."""
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
