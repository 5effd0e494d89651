"""Settings written once: a frozen dataclass's field carries its default, its
command-line flag's help and whether a resumed run must keep it; the flags of
a command are built from the fields (`add_flags`) and the config from the
parsed flags (`from_flags`). `PairingConfig`, `MaskingConfig`,
`BatchingConfig` and `PretrainingConfig` are such dataclasses; a config may
hold another as a field (`nested`: `PretrainingConfig.pairing`), whose
fields are then flags of the command too: one settings tree."""

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


def nested(config_class, **defaults):
    """A config field that holds a whole `config_class` (default: its own
    defaults, with `defaults` changed); its fields are flags as its own."""
    return dataclasses.field(default=config_class(**defaults), metadata={"nested": True})


def is_nested(field: dataclasses.Field) -> bool:
    return field.metadata.get("nested", False)


def flat_fields(config_class, defaults=None) -> list[tuple[dataclasses.Field, object]]:
    """Every setting field of `config_class`, those of nested configs in their
    place, each with its default there (a nested config's default may differ
    from its class's)."""
    fields = []
    for field in dataclasses.fields(config_class):
        default = field.default if defaults is None else getattr(defaults, field.name)
        if is_nested(field):
            fields += flat_fields(type(field.default), default)
        else:
            fields.append((field, default))
    return fields


def flat_values(config) -> dict:
    """`config`'s settings by field name, those of nested configs included."""
    values = {}
    for field in dataclasses.fields(config):
        value = getattr(config, field.name)
        values.update(flat_values(value) if is_nested(field) else {field.name: value})
    return values


def field_of(config_class, name: str) -> dataclasses.Field:
    return next(field for field in dataclasses.fields(config_class) if field.name == name)


def flag_of(config_class, name: str, default=None) -> str:
    """The command-line flag of a field: `--batch-size`; `--no-drop-remainder`
    for a field that is on by default (`default`, where a nested config's
    differs from its class's)."""
    field = field_of(config_class, name)
    if field.metadata["flag"]:
        return field.metadata["flag"]
    dashed = name.replace("_", "-")
    default = field.default if default is None else default
    return f"--no-{dashed}" if default is True else f"--{dashed}"


def add_flags(parser: argparse.ArgumentParser, config_class, *, names=None, required=()) -> None:
    """Adds one flag per field of `config_class` (or per field in `names`),
    those of its nested configs included, to `parser`; those in `required`
    must be given."""
    for field, default in flat_fields(config_class):
        if names is not None and field.name not in names:
            continue
        owner = next(c for c in _config_classes(config_class) if field in dataclasses.fields(c))
        flag = flag_of(owner, field.name, default)
        options = {"dest": field.name, "help": field.metadata["help"]}
        if isinstance(default, bool) and field.type in (bool, "bool"):
            parser.add_argument(flag, action="store_false" if default else "store_true", **options)
            continue
        options.update(type=_flag_type(field.type), default=default, required=field.name in required)
        if field.metadata["choices"]:
            options["choices"] = field.metadata["choices"]
        if field.metadata["metavar"]:
            options["metavar"] = field.metadata["metavar"]
        parser.add_argument(flag, **options)


def from_flags(config_class, args: argparse.Namespace, **overrides):
    """The `config_class` of parsed flags (`add_flags`'), nested configs
    built from theirs, with `overrides` given."""
    values = {}
    for field in dataclasses.fields(config_class):
        if is_nested(field):
            values[field.name] = from_flags(type(field.default), args)
        else:
            values[field.name] = getattr(args, field.name)
    return config_class(**{**values, **overrides})


def _config_classes(config_class) -> list:
    """`config_class` and the classes of its nested configs, all levels."""
    classes = [config_class]
    for field in dataclasses.fields(config_class):
        if is_nested(field):
            classes += _config_classes(type(field.default))
    return classes


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
