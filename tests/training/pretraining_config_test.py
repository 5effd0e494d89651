"""`PretrainingConfig` is the one source of the `keras-bert3 pretrain` flags:
one flag per field with the field's default, help and choices, and no other
flag but the command's own (`--backend`, `--verbose`); the resume fields are
fields; the config is frozen and refuses bad values naming their flags."""

import argparse
import dataclasses

import pytest

from keras_bert3.cli import build_parser
from keras_bert3.training.pretraining_config import RESUME_FIELDS
from keras_bert3.training.pretraining_config import PretrainingConfig
from keras_bert3.training.pretraining_config import add_flags
from keras_bert3.training.pretraining_config import from_flags

FIELDS = [field.name for field in dataclasses.fields(PretrainingConfig)]


def pretrain_parser() -> argparse.ArgumentParser:
    """The `pretrain` subcommand's parser, as `keras-bert3` builds it."""
    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return subparsers.choices["pretrain"]


def test_the_command_has_one_flag_per_field_and_only_its_own_besides():
    flags = {action.dest: action for action in pretrain_parser()._actions if action.dest != "help"}
    assert sorted(set(flags) - {"backend", "verbose"}) == sorted(FIELDS)
    for field in dataclasses.fields(PretrainingConfig):
        action = flags[field.name]
        assert action.default == field.default, field.name
        assert action.help == field.metadata["help"], field.name
        assert tuple(action.choices or ()) == tuple(field.metadata["choices"] or ()), field.name


def test_parsed_defaults_are_the_config_defaults():
    parser = argparse.ArgumentParser()
    add_flags(parser)
    assert from_flags(parser.parse_args(["--output", "run"])) == PretrainingConfig(output="run")
    config = from_flags(
        parser.parse_args(["--output", "run", "--no-nsp", "--batch-size", "8", "--packed-length", "512"])
    )
    assert (config.nsp, config.batch_size, config.packed_length) == (False, 8, 512)
    with pytest.raises(SystemExit):
        parser.parse_args(["--output", "run", "--precision", "float64"])


def test_resume_fields_are_fields_and_the_run_records_every_field(tmp_path):
    from keras_bert3.training.pretraining_run import RUN_CONFIG_FILE
    from keras_bert3.training.pretraining_run import _check_resume

    assert set(RESUME_FIELDS) < set(FIELDS)
    assert {"sequence_length", "batch_size", "seed", "checkpoint_every", "packed_length"} <= set(RESUME_FIELDS)
    config = PretrainingConfig(output=str(tmp_path / "run"), corpus="corpus.txt")
    _check_resume(config)
    import json

    with open(tmp_path / "run" / RUN_CONFIG_FILE) as file:
        assert json.load(file) == dataclasses.asdict(config)


def test_the_config_is_frozen_and_refuses_bad_values_by_flag():
    config = PretrainingConfig(output="run", corpus="corpus.txt")
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.steps = 5
    config.validate()
    with pytest.raises(ValueError, match=r"--batch-size 0 must be at least 1; --warmup-steps 1000 must be at least 0"):
        dataclasses.replace(config, batch_size=0, warmup_steps=1000).validate()
    with pytest.raises(ValueError, match="no --corpus"):
        PretrainingConfig(output="run").validate()
