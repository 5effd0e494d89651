"""`PretrainingConfig` is the one source of the `keras-bert3 pretrain` flags:
one settings tree (the run's fields and its three data configs'), one flag
per field with the field's default, help and choices, and no other flag but
the command's own (`--backend`, `--verbose`); the resume fields are fields;
the config is frozen and refuses bad values naming their flags.
`PairingConfig` is the one source of the `prepare-data` flags. A run.json of
the last release still resumes."""

import argparse
import dataclasses
import json
import pathlib

import pytest

from keras_bert3.cli import PREPARE_DATA_RUN_FLAGS
from keras_bert3.cli import build_parser
from keras_bert3.data import BatchingConfig
from keras_bert3.data import MaskingConfig
from keras_bert3.data import PairingConfig
from keras_bert3.data.setting_fields import flag_of
from keras_bert3.data.setting_fields import flat_fields
from keras_bert3.training.pretraining_config import RESUME_FIELDS
from keras_bert3.training.pretraining_config import PretrainingConfig
from keras_bert3.training.pretraining_config import add_flags
from keras_bert3.training.pretraining_config import from_flags

pytestmark = pytest.mark.backend_free  # Files and Python only: no Keras backend reaches them.

FIELDS = [field.name for field, _ in flat_fields(PretrainingConfig)]


def command_parser(command: str = "pretrain") -> argparse.ArgumentParser:
    """A subcommand's parser, as `keras-bert3` builds it."""
    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return subparsers.choices[command]


def assert_flags_are_fields(flags: dict, fields) -> None:
    """Each field's flag has the field's default there (inverted for a switch), help and choices."""
    for field, default in fields:
        action = flags[field.name]
        assert action.default == default, field.name
        turned_off = default is True and not field.metadata["flag"]  # `--no-...`: "turn off (on by default): ...".
        assert action.help == ("turn off (on by default): " if turned_off else "") + field.metadata["help"], field.name
        assert tuple(action.choices or ()) == tuple(field.metadata["choices"] or ()), field.name


def test_the_command_has_one_flag_per_field_of_the_tree_and_only_its_own_besides():
    flags = {action.dest: action for action in command_parser()._actions if action.dest != "help"}
    assert sorted(set(flags) - {"backend", "verbose", "config_file"}) == sorted(FIELDS)  # --config: flags from a file.
    assert_flags_are_fields(flags, flat_fields(PretrainingConfig))


def test_help_lists_a_flag_for_every_field_of_the_data_configs():
    """pretrain: the three (it pairs, masks and batches); prepare-data: the pairs (its shards hold them)."""
    run = PretrainingConfig()
    data_configs = {"pairing": PairingConfig, "masking": MaskingConfig, "batching": BatchingConfig}
    for command, parts in (("pretrain", data_configs), ("prepare-data", {"pairing": PairingConfig})):
        text = command_parser(command).format_help()
        for part, config_class in parts.items():
            defaults = getattr(run, part) if command == "pretrain" else None  # The run's: whole batches.
            for field, default in flat_fields(config_class, defaults):
                assert flag_of(config_class, field.name, default) in text, (command, field.name)


def test_a_flag_that_turns_a_setting_off_says_so():
    """`pretrain --no-drop-remainder` keeps the last partial batch: its help, the field's ("drop the last partial
    batch of a pass"), said the opposite of what the flag does."""
    actions = {a.option_strings[0]: a for a in command_parser("pretrain")._actions if a.option_strings}
    help_text = actions["--no-drop-remainder"].help
    assert (
        help_text
        == f"turn off (on by default): {BatchingConfig.__dataclass_fields__['drop_remainder'].metadata['help']}"
    )
    assert not actions["--whole-word-masking"].help.startswith("turn off")  # Off by default: the field's own help.


def test_prepare_data_has_one_flag_per_pairing_field_and_only_its_own_besides():
    parser = command_parser("prepare-data")
    flags = {action.dest: action for action in parser._actions if action.dest != "help"}
    pairing = [field.name for field in dataclasses.fields(PairingConfig)]
    own = {"corpus", "output", "preset", "workers", "num_shards", "beam", "beam_options", *PREPARE_DATA_RUN_FLAGS}
    assert sorted(set(flags) - own) == sorted(pairing)
    assert_flags_are_fields(flags, flat_fields(PairingConfig))
    run_fields = [(f, d) for f, d in flat_fields(PretrainingConfig) if f.name in PREPARE_DATA_RUN_FLAGS]
    assert_flags_are_fields(flags, run_fields)
    args = parser.parse_args(["--corpus", "c", "--output", "o", "--no-nsp", "--original-nsp", "--pairing-group", "8"])
    from keras_bert3.data.setting_fields import from_flags as config_from_flags

    assert config_from_flags(PairingConfig, args) == PairingConfig(
        next_sentence_prediction=False, balanced_nsp=False, pairing_group=8
    )


def test_finetune_has_one_flag_per_field_of_its_config():
    from keras_bert3.training.finetuning_config import REQUIRED
    from keras_bert3.training.finetuning_config import FinetuningConfig

    parser = command_parser("finetune")
    flags = {action.dest: action for action in parser._actions if action.dest not in ("help", "config_file")}
    assert sorted(flags) == sorted(field.name for field in dataclasses.fields(FinetuningConfig))
    assert_flags_are_fields(flags, flat_fields(FinetuningConfig))
    assert {name for name, action in flags.items() if action.required} == set(REQUIRED)


def test_flags_take_underscores_and_hugging_faces_spellings():
    """`finetune --learning_rate 1e-4 --num_train_epochs 2 ...` as Hugging Face's run_glue.py is run: every flag also
    takes underscores, and a few take Hugging Face's own names (issue 100, item 7)."""
    from keras_bert3.data.setting_fields import from_flags as config_from_flags
    from keras_bert3.training.finetuning_config import FinetuningConfig

    flags = ["--preset", "p", "--train", "t.csv", "--output", "o", "--learning_rate", "1e-4", "--num_train_epochs", "2"]
    flags += ["--per_device_train_batch_size", "8", "--max_seq_length", "64", "--seed", "7", "--label_column", "y"]
    config = config_from_flags(FinetuningConfig, command_parser("finetune").parse_args(flags))
    assert (config.learning_rate, config.epochs, config.batch_size, config.sequence_length) == (1e-4, 2, 8, 64)
    assert (config.seed, config.label_column) == (7, "y")
    pretrain = command_parser("pretrain").parse_args(["--output", "o", "--no_drop_remainder", "--batch_size", "16"])
    assert (pretrain.drop_remainder, pretrain.batch_size) == (False, 16)


def test_the_run_holds_the_data_configs_and_takes_their_old_flat_keywords():
    """The data settings are the pipeline's configs themselves; the flat
    keywords and attributes of 2026-11-28 give the same config, with a warning."""
    config = PretrainingConfig(
        output="run",
        pairing=PairingConfig(sequence_length=64, next_sentence_prediction=False),
        masking=MaskingConfig(max_predictions_per_seq=9),
        batching=BatchingConfig(batch_size=4, drop_remainder=True),
    )
    with pytest.warns(DeprecationWarning, match=r"PretrainingConfig\(sequence_length=64, nsp=False.*pass pairing="):
        old = PretrainingConfig(output="run", sequence_length=64, nsp=False, max_predictions_per_seq=9, batch_size=4)
    assert old == config
    with pytest.warns(
        DeprecationWarning, match=r"PretrainingConfig.nsp is deprecated .* use .pairing.next_sentence_prediction"
    ):
        assert old.nsp is False
    assert PretrainingConfig().batching.drop_remainder  # Whole batches by default: a step takes one.
    with pytest.raises(AttributeError, match="no attribute 'batch_sizes'"):
        config.batch_sizes


def test_parsed_defaults_are_the_config_defaults():
    parser = argparse.ArgumentParser()
    add_flags(parser)
    assert from_flags(parser.parse_args(["--output", "run"])) == PretrainingConfig(output="run")
    flags = [
        "--no-nsp",
        "--batch-size",
        "8",
        "--packed-length",
        "512",
        "--whole-word-masking",
        "--masked-lm-prob",
        "0.2",
    ]
    flags += ["--file-format", "paragraphs", "--no-drop-remainder", "--shuffle-buffer", "64", "--pairing-group", "8"]
    config = from_flags(parser.parse_args(["--output", "run", *flags]))
    assert config.pairing == PairingConfig(next_sentence_prediction=False, file_format="paragraphs", pairing_group=8)
    assert config.masking == MaskingConfig(whole_word_masking=True, masked_lm_prob=0.2)
    assert config.batching == BatchingConfig(batch_size=8, packed_length=512, drop_remainder=False, shuffle_buffer=64)
    with pytest.raises(SystemExit):
        parser.parse_args(["--output", "run", "--precision", "float64"])


def test_resume_fields_are_fields_and_the_run_records_every_field(tmp_path):
    from keras_bert3.training.pretraining_run import RUN_CONFIG_FILE
    from keras_bert3.training.pretraining_run import _check_resume

    assert set(RESUME_FIELDS) < set(FIELDS)
    assert {"sequence_length", "batch_size", "seed", "checkpoint_every", "packed_length"} <= set(RESUME_FIELDS)
    config = PretrainingConfig(output=str(tmp_path / "run"), corpus="corpus.txt")
    _check_resume(config)
    with open(tmp_path / "run" / RUN_CONFIG_FILE) as file:
        assert json.load(file) == dataclasses.asdict(config)


def test_a_run_json_of_the_last_release_still_resumes_and_refuses_changed_settings(tmp_path):
    """tests/training/run_json_of_2026_11_28.json: written by 2026-11-28's
    `keras-bert3 pretrain` (flat, `nsp`), the settings below."""
    from keras_bert3.training.pretraining_run import BACKUP_DIR
    from keras_bert3.training.pretraining_run import RUN_CONFIG_FILE
    from keras_bert3.training.pretraining_run import _check_resume

    run = tmp_path / "run"
    (run / BACKUP_DIR).mkdir(parents=True)  # A checkpoint to resume.
    old = (pathlib.Path(__file__).parent / "run_json_of_2026_11_28.json").read_text()
    (run / RUN_CONFIG_FILE).write_text(old)
    same = PretrainingConfig(
        output=str(run),
        corpus="corpus.txt",
        pairing=PairingConfig(sequence_length=64, next_sentence_prediction=False),
        masking=MaskingConfig(max_predictions_per_seq=10),
        batching=BatchingConfig(batch_size=8, packed_length=256, drop_remainder=True),
    )
    _check_resume(same)  # Resumes: the same settings, under their new names.
    (run / RUN_CONFIG_FILE).write_text(old)
    changed = dataclasses.replace(same, pairing=PairingConfig(sequence_length=64))
    with pytest.raises(ValueError, match="other settings \\(next_sentence_prediction: False -> True\\)"):
        _check_resume(changed)


def test_the_config_is_frozen_and_refuses_bad_values_by_flag():
    config = PretrainingConfig(output="run", corpus="corpus.txt")
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.steps = 5
    config.validate()
    with pytest.raises(ValueError, match=r"--batch-size 0 must be at least 1; --warmup-steps 1000 must be at least 0"):
        dataclasses.replace(config, batching=BatchingConfig(batch_size=0), warmup_steps=1000).validate()
    with pytest.raises(ValueError, match="no --corpus"):
        PretrainingConfig(output="run").validate()
