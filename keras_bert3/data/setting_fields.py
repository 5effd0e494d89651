"""Settings written once: a frozen dataclass field carries its default, its flag's help and whether a resumed run must
keep it; a command's flags are built from the fields (`add_flags`), the config from the parsed flags (`from_flags`). A
config may hold another (`nested`: `PretrainingConfig.pairing`), whose fields are then flags of the command too."""

import argparse
import dataclasses
import types
import typing


def setting(
    default,
    help: str,
    *,
    resume: bool = False,
    choices=None,
    metavar: str | None = None,
    flag: str | None = None,
    aliases: tuple[str, ...] = (),
):
    """A config field: its default, its flag's help (argparse's: `%%` for %), whether a resumed run must
    keep it, its flag where that is not the field's name (`--no-nsp`), and other spellings of its flag (Hugging
    Face's: `aliases=("--num_train_epochs",)`); every flag also takes underscores (`--learning_rate`)."""
    metadata = {"help": help, "resume": resume, "choices": choices, "metavar": metavar, "flag": flag}
    metadata["aliases"] = tuple(aliases)
    return dataclasses.field(default=default, metadata=metadata)


def nested(config_class, **defaults):
    """A config field holding a whole `config_class` (with `defaults` changed), whose fields are flags too."""
    return dataclasses.field(default=config_class(**defaults), metadata={"nested": True})


def is_nested(field: dataclasses.Field) -> bool:
    return field.metadata.get("nested", False)


def flat_fields(config_class, defaults=None) -> list[tuple[dataclasses.Field, object]]:
    """Every setting field of `config_class`, nested configs' in their place, each with its default there
    (a nested config's may differ from its class's)."""
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
    """A field's flag: `--batch-size`; `--no-drop-remainder` for one on by default (`default`: a nested
    config's, where it differs from the class's)."""
    field = field_of(config_class, name)
    if field.metadata["flag"]:
        return field.metadata["flag"]
    dashed = name.replace("_", "-")
    default = field.default if default is None else default
    return f"--no-{dashed}" if default is True else f"--{dashed}"


def add_flags(parser: argparse.ArgumentParser, config_class, *, names=None, required=()) -> None:
    """Adds a flag per field of `config_class` (nested ones included; only `names` if given) to `parser`;
    those in `required` must be given."""
    for field, default in flat_fields(config_class):
        if names is not None and field.name not in names:
            continue
        owner = next(c for c in _config_classes(config_class) if field in dataclasses.fields(c))
        flag = flag_of(owner, field.name, default)
        spellings = dict.fromkeys([flag, "--" + flag[2:].replace("-", "_"), *field.metadata.get("aliases", ())])
        options = {"dest": field.name, "help": field.metadata["help"]}
        if isinstance(default, bool) and field.type in (bool, "bool"):
            if default and not field.metadata["flag"]:  # `--no-...`: its help says what the setting does when on.
                options["help"] = f"turn off (on by default): {options['help']}"
            parser.add_argument(*spellings, action="store_false" if default else "store_true", **options)
            continue
        options.update(type=_flag_type(field.type), default=default, required=field.name in required)
        if field.metadata["choices"]:
            options["choices"] = field.metadata["choices"]
        if field.metadata["metavar"]:
            options["metavar"] = field.metadata["metavar"]
        parser.add_argument(*spellings, **options)


def from_flags(config_class, args: argparse.Namespace, **overrides):
    """The `config_class` of parsed flags (`add_flags`'), nested configs included, with `overrides`."""
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
    """The `config_class` of a dict holding its fields (and maybe more); refuses one that lacks a field,
    naming `where` it came from."""
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
