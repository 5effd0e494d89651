"""Settings written once: a frozen dataclass's field carries its default, its
command-line flag's help and whether a resumed run must keep it; the flags of
a command are built from the fields (`add_flags`) and the config from the
parsed flags (`from_flags`). `PairingConfig`, `MaskingConfig`,
`BatchingConfig` and `PretrainingConfig` are such dataclasses."""

import argparse
import dataclasses
import types
import typing


def setting(
    default, help: str, *, resume: bool = False, choices=None, metavar: str | None = None, flag: str | None = None
):
    """A config field: its default, its flag's help (argparse's: `%%` for %),
    whether a resumed run must keep it, and its flag where it is not the
    field's name (`--batch-size` for `batch_size`, `--no-nsp` for a field on
    by default)."""
    metadata = {"help": help, "resume": resume, "choices": choices, "metavar": metavar, "flag": flag}
    return dataclasses.field(default=default, metadata=metadata)


def same_as(config_class, name: str, **changes):
    """A field with the default, help and flag of `config_class`'s field
    `name` (`changes` as `setting`'s): a setting that a larger config holds
    too, written once."""
    field = field_of(config_class, name)
    metadata = {**field.metadata, **changes}
    return setting(field.default, metadata.pop("help"), **metadata)


def field_of(config_class, name: str) -> dataclasses.Field:
    return next(field for field in dataclasses.fields(config_class) if field.name == name)


def flag_of(config_class, name: str) -> str:
    """The command-line flag of a field: `--batch-size`; `--no-nsp` for a
    field that is on by default."""
    field = field_of(config_class, name)
    if field.metadata["flag"]:
        return field.metadata["flag"]
    dashed = name.replace("_", "-")
    return f"--no-{dashed}" if field.default is True else f"--{dashed}"


def add_flags(parser: argparse.ArgumentParser, config_class, *, names=None, required=()) -> None:
    """Adds one flag per field of `config_class` (or per field in `names`) to
    `parser`; those in `required` must be given."""
    for field in dataclasses.fields(config_class):
        if names is not None and field.name not in names:
            continue
        options = {"dest": field.name, "help": field.metadata["help"]}
        if field.default is True:
            parser.add_argument(flag_of(config_class, field.name), action="store_false", **options)
            continue
        options.update(type=_flag_type(field.type), default=field.default, required=field.name in required)
        if field.metadata["choices"]:
            options["choices"] = field.metadata["choices"]
        if field.metadata["metavar"]:
            options["metavar"] = field.metadata["metavar"]
        parser.add_argument(flag_of(config_class, field.name), **options)


def from_flags(config_class, args: argparse.Namespace, **overrides):
    """The `config_class` of parsed flags (`add_flags`'), with `overrides` given."""
    values = {field.name: getattr(args, field.name) for field in dataclasses.fields(config_class)}
    return config_class(**{**values, **overrides})


def from_dict(config_class, values: dict, where: str):
    """The `config_class` of a dict that holds its fields (and maybe more, as
    a file of several configs does); refuses one that lacks a field, naming
    `where` it came from."""
    names = [field.name for field in dataclasses.fields(config_class)]
    missing = [name for name in names if name not in values]
    if missing:
        raise ValueError(
            f"{where} has no {', '.join(missing)}: it was written by another version of keras_bert3. "
            "Write it again with this one."
        )
    return config_class(**{name: values[name] for name in names})


def _flag_type(annotation):
    """The argparse type of a field's annotation: `int | None` -> int."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        kinds = [a for a in typing.get_args(annotation) if a is not type(None) and a is not list]
        return kinds[0]
    return annotation
