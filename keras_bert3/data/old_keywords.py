"""The keywords the data entry points took before the configs (`sequence_length=`, `batch_size=`, ...; also the
positional `pretraining_dataset(files, tokenizer, 128, 20, 64)`), still taken for one release: each is put into
its config's field, with a `DeprecationWarning` that shows the new form of the call.
"""

import dataclasses
import functools
import inspect
import warnings

from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.masking_config import MaskingConfig
from keras_bert3.data.pairing_config import PairingConfig

CONFIGS = {"pairing": PairingConfig, "masking": MaskingConfig, "batching": BatchingConfig}

# Each old keyword: the argument that holds it now and its field there.
OLD_KEYWORDS = {
    **{name: ("pairing", name) for name in ("sequence_length", "next_sentence_prediction", "short_seq_prob")},
    **{name: ("pairing", name) for name in ("balanced_nsp", "pairing_group", "file_format")},
    **{name: ("masking", name) for name in ("max_predictions_per_seq", "masked_lm_prob", "whole_word_masking")},
    **{name: ("batching", name) for name in ("batch_size", "packed_length", "drop_remainder", "shuffle_buffer")},
    "example_buffer": ("batching", "shuffle_buffer"),
    "nsp": ("pairing", "next_sentence_prediction"),  # PretrainingConfig's.
}

# An int where a config goes: the old positional setting in that place.
OLD_POSITIONAL = {"pairing": "sequence_length", "masking": "max_predictions_per_seq", "batching": "batch_size"}


def takes_old_keywords(function):
    """`function` (which takes some of `pairing`, `masking`, `batching`) also taking `OLD_KEYWORDS`,
    with a `DeprecationWarning`; an argument that is None starts from its config's defaults."""
    signature = inspect.signature(function)
    name = function.__qualname__.removesuffix(".__init__")  # A config's constructor: the class's name.

    @functools.wraps(function)
    def with_old_keywords(*args, **kwargs):
        old = {name: kwargs.pop(name) for name in list(kwargs) if name in OLD_KEYWORDS}
        bound = signature.bind(*args, **kwargs)
        for argument, field in OLD_POSITIONAL.items():
            value = bound.arguments.get(argument)
            if isinstance(value, int) and not isinstance(value, bool):
                del bound.arguments[argument]
                old[field] = value
        if not old:
            return function(*args, **kwargs)
        fields = {}
        for old_name, value in old.items():
            argument, field = OLD_KEYWORDS[old_name]
            if argument not in signature.parameters:
                raise TypeError(f"{name}() takes no {old_name!r}: it has no {CONFIGS[argument].__name__}.")
            fields.setdefault(argument, {})[field] = value
        for argument, changes in fields.items():
            given = bound.arguments.get(argument)
            start = given if given is not None else signature.parameters[argument].default
            bound.arguments[argument] = dataclasses.replace(
                start if start is not None else CONFIGS[argument](), **changes
            )
        new_form = ", ".join(
            f"{argument}={CONFIGS[argument].__name__}({', '.join(f'{f}={v!r}' for f, v in changes.items())})"
            for argument, changes in fields.items()
        )
        warnings.warn(
            f"{name}({', '.join(f'{key}={value!r}' for key, value in old.items())}) is deprecated "
            f"and will be removed in the next release: pass {new_form}.",
            DeprecationWarning,
            stacklevel=2,
        )
        return function(*bound.args, **bound.kwargs)

    return with_old_keywords
