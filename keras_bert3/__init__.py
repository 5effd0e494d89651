"""keras_bert3: BERT for Keras 3 on TensorFlow and JAX."""

__version__ = "0.1.0"
