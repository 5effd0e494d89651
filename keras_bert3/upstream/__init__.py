"""The only modules that touch private Keras, TensorFlow, JAX or keras-hub APIs.

Each works around one upstream limitation, names in its docstring the private API it uses, and checks at import that the
installed version still has it (`private_api.require_private`); tests/upstream/ checks that each still behaves as relied
on, so an upgrade that changes one fails there and nowhere else."""
