"""The version of keras_bert3, written once: the package and its presets' configs read it, and
pyproject.toml takes it from here (`[tool.setuptools.dynamic]`)."""

__version__ = "0.1.0"
