"""A command's flags read from a JSON file (`--config args.json`, as Hugging Face's scripts read theirs), and its
`--help` showing each flag's default."""

import argparse
import json

CONFIG_FLAG = "--config"


class DefaultsShown(argparse.HelpFormatter):
    """argparse's help, each option's default after its help ("(default: 32)"); not where the default is None, a
    switch's True or False, or where the help already says what it is."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if not action.option_strings or default in (None, argparse.SUPPRESS) or isinstance(default, bool):
            return text
        return text if "default" in text else f"{text} (default: %(default)s)"


def add_config_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        CONFIG_FLAG,
        dest="config_file",
        metavar="FILE.json",
        help='read flags from a JSON object, its keys the flags\' names ("learning_rate", "num_train_epochs", '
        '"--batch-size"); flags given on the command line win',
    )


def with_config_file(parser: argparse.ArgumentParser, argv) -> argparse.Namespace:
    """`argv` parsed by `parser`, where `--config FILE` is given with the file's flags first: each key a flag's name
    (`learning_rate`, `learning-rate` or `--learning-rate`), its value the flag's (true: a switch given, false: left
    out; a list: several values), placed right after the command's name so that the command line's own flags, after
    them, win. A file that is no JSON object of flags is refused naming it; a key that is no flag, as argparse does."""
    path = _config_path(argv)
    if path is None:
        return parser.parse_args(argv)
    try:
        with open(path, encoding="utf-8") as f:
            values = json.load(f)
    except (OSError, ValueError) as error:
        parser.error(f"{CONFIG_FLAG} {path}: {error}")
    if not isinstance(values, dict):
        parser.error(f"{CONFIG_FLAG} {path} holds a JSON {type(values).__name__}: give an object of flags and values.")
    words = []
    for key, value in values.items():
        flag = "--" + key.lstrip("-")
        if value is True:
            words.append(flag)
        elif value is not False and value is not None:
            words += [flag, *(str(v) for v in value)] if isinstance(value, list) else [flag, str(value)]
    command = next(index for index, word in enumerate(argv) if not word.startswith("-"))
    return parser.parse_args([*argv[: command + 1], *words, *argv[command + 1 :]])


def _config_path(argv) -> str | None:
    """The value of `--config` in `argv` (`--config FILE` or `--config=FILE`), or None."""
    for index, word in enumerate(argv):
        if word == CONFIG_FLAG and index + 1 < len(argv):
            return argv[index + 1]
        if word.startswith(CONFIG_FLAG + "="):
            return word.split("=", 1)[1]
    return None
