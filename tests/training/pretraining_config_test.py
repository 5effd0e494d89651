"""`PretrainingConfig` is the one source of the `keras-bert3 pretrain` flags:
one flag per field with the field's default, help and choices, and no other
flag but the command's own (`--backend`, `--verbose`); the resume fields are
fields; the config is frozen and refuses bad values naming their flags.
`PairingConfig` is the one source of the `prepare-data` flags, and the data
settings the run shares with the pipeline's configs are theirs."""

import argparse
import dataclasses

import pytest

from keras_bert3.cli import PREPARE_DATA_RUN_FLAGS
from keras_bert3.cli import build_parser
from keras_bert3.data import BatchingConfig
from keras_bert3.data import MaskingConfig
from keras_bert3.data import PairingConfig
from keras_bert3.training.pretraining_config import RESUME_FIELDS
from keras_bert3.training.pretraining_config import PretrainingConfig
from keras_bert3.training.pretraining_config import add_flags
from keras_bert3.training.pretraining_config import from_flags

pytestmark = pytest.mark.backend_free  # Files and Python only: no Keras backend reaches them.

FIELDS = [field.name for field in dataclasses.fields(PretrainingConfig)]


def command_parser(command: str = "pretrain") -> argparse.ArgumentParser:
    """A subcommand's parser, as `keras-bert3` builds it."""
    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return subparsers.choices[command]


def assert_flags_are_fields(flags: dict, fields) -> None:
    """Each field's flag has the field's default (inverted for a switch), help and choices."""
    for field in fields:
        action = flags[field.name]
        assert action.default == field.default, field.name
        assert action.help == field.metadata["help"], field.name
        assert tuple(action.choices or ()) == tuple(field.metadata["choices"] or ()), field.name


def test_the_command_has_one_flag_per_field_and_only_its_own_besides():
    flags = {action.dest: action for action in command_parser()._actions if action.dest != "help"}
    assert sorted(set(flags) - {"backend", "verbose"}) == sorted(FIELDS)
    assert_flags_are_fields(flags, dataclasses.fields(PretrainingConfig))


def test_prepare_data_has_one_flag_per_pairing_field_and_only_its_own_besides():
    parser = command_parser("prepare-data")
    flags = {action.dest: action for action in parser._actions if action.dest != "help"}
    pairing = [field.name for field in dataclasses.fields(PairingConfig)]
    own = {"corpus", "output", "preset", "workers", "num_shards", "beam", "beam_options", *PREPARE_DATA_RUN_FLAGS}
    assert sorted(set(flags) - own) == sorted(pairing)
    assert_flags_are_fields(flags, dataclasses.fields(PairingConfig))
    run_fields = [f for f in dataclasses.fields(PretrainingConfig) if f.name in PREPARE_DATA_RUN_FLAGS]
    assert_flags_are_fields(flags, run_fields)
    args = parser.parse_args(["--corpus", "c", "--output", "o", "--no-nsp", "--original-nsp", "--pairing-group", "8"])
    from keras_bert3.data.setting_fields import from_flags as config_from_flags

    assert config_from_flags(PairingConfig, args) == PairingConfig(
        next_sentence_prediction=False, balanced_nsp=False, pairing_group=8
    )


def test_the_run_shares_the_data_settings_of_the_pipeline_configs():
    """A data setting of the run has its pipeline config's default and help,
    and the run's configs carry its values."""
    shared = {
        "sequence_length": (PairingConfig, "sequence_length"),
        "nsp": (PairingConfig, "next_sentence_prediction"),
        "max_predictions_per_seq": (MaskingConfig, "max_predictions_per_seq"),
        "batch_size": (BatchingConfig, "batch_size"),
        "packed_length": (BatchingConfig, "packed_length"),
    }
    for name, (config_class, field_name) in shared.items():
        ours = next(f for f in dataclasses.fields(PretrainingConfig) if f.name == name)
        theirs = next(f for f in dataclasses.fields(config_class) if f.name == field_name)
        assert (ours.default, ours.metadata) == (theirs.default, theirs.metadata), name
    config = PretrainingConfig(output="run", sequence_length=64, nsp=False, max_predictions_per_seq=9, batch_size=4)
    assert config.pairing == PairingConfig(sequence_length=64, next_sentence_prediction=False)
    assert config.masking == MaskingConfig(max_predictions_per_seq=9)
    assert config.batching == BatchingConfig(batch_size=4, drop_remainder=True)


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
