"""BERT's activation functions by name, and the Hugging Face names for them: the original TensorFlow
BERT used the tanh GELU, Hugging Face's `hidden_act="gelu"` the exact erf form."""

from keras import activations
from keras import ops

# Our activation names: what `BertBackbone(activation=...)` accepts.
ACTIVATION_NAMES = ("gelu", "gelu_approximate", "relu", "silu", "tanh")

# Hugging Face `hidden_act` values and the activation they mean here.
HUGGING_FACE_ACTIVATIONS = {
    "gelu": "gelu",
    "gelu_python": "gelu",
    "gelu_new": "gelu_approximate",
    "gelu_pytorch_tanh": "gelu_approximate",
    "gelu_fast": "gelu_approximate",
    "relu": "relu",
    "silu": "silu",
    "swish": "silu",
    "tanh": "tanh",
}


def gelu_exact(x):
    """GELU with the erf, as Hugging Face's `hidden_act="gelu"`."""
    return ops.gelu(x, approximate=False)


def gelu_approximate(x):
    """GELU with the tanh approximation, as the original TensorFlow BERT."""
    return ops.gelu(x, approximate=True)


def get_activation(name):
    """Returns the function for one of `ACTIVATION_NAMES`."""
    if name == "gelu":
        return gelu_exact
    if name == "gelu_approximate":
        return gelu_approximate
    if name in ACTIVATION_NAMES:
        return activations.get(name)
    raise ValueError(
        f"Unknown activation {name!r}. Use one of {ACTIVATION_NAMES}: 'gelu' is "
        "the exact erf GELU (Hugging Face), 'gelu_approximate' the tanh form "
        "(original TensorFlow BERT)."
    )


def activation_from_hugging_face(hidden_act):
    """Maps a Hugging Face `hidden_act` to our activation name."""
    if hidden_act not in HUGGING_FACE_ACTIVATIONS:
        raise ValueError(
            f"The checkpoint's hidden_act={hidden_act!r} is not supported; "
            f"supported: {sorted(HUGGING_FACE_ACTIVATIONS)}."
        )
    return HUGGING_FACE_ACTIVATIONS[hidden_act]
