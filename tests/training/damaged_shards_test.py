"""A prepared shard cut short or with a damaged record is named by
`keras-bert3 pretrain` (TensorFlow's DataLossError names no file), and the
`prepare-data` command that wrote it, run again once it is deleted,
rebuilds it byte for byte."""

import os

import pytest

from tests.training.pretrain_command import refusal


@pytest.mark.slow
@pytest.mark.backend_free  # The error comes from the input pipeline, the same under either backend.
def test_a_damaged_shard_is_named_and_prepare_data_rebuilds_it(tmp_path, small_corpus, capsys):
    from keras_bert3.cli import main

    prepared = tmp_path / "prepared"
    prepare = [
        "prepare-data",
        "--corpus",
        small_corpus,
        "--output",
        str(prepared),
        "--num-shards",
        "3",
        "--workers",
        "1",
        "--vocabulary-size",
        "1500",
        "--sequence-length",
        "64",
    ]
    assert main(prepare) == 0
    pretrain = [
        "pretrain",
        "--corpus",
        str(prepared),
        "--output",
        str(tmp_path / "run"),
        "--steps",
        "10",
        "--batch-size",
        "8",
        "--sequence-length",
        "64",
        "--max-predictions-per-seq",
        "10",
    ]
    shards = sorted(str(path) for path in prepared.glob("paired-*.tfrecord"))
    original = open(shards[1], "rb").read()

    for damage, reason in [
        (lambda data: data[: len(data) // 2], "truncated record at "),  # Cut short (a copy stopped midway).
        (lambda data: data[:5000] + bytes([data[5000] ^ 0xFF]) + data[5001:], "corrupted record at "),
    ]:
        with open(shards[1], "wb") as f:
            f.write(damage(original))
        code, errors = refusal(main, pretrain, capsys)
        assert code == 2 and len(errors) == 1, errors
        assert errors[0].startswith(f"keras-bert3 pretrain: {shards[1]} is damaged ({reason}"), errors
        assert f"Delete it and run the `keras-bert3 prepare-data` command that wrote {prepared} again" in errors[0]
        assert not os.path.exists(tmp_path / "run" / "backup")  # Refused before the model was built.

    os.remove(shards[1])
    assert main(prepare) == 0
    assert open(shards[1], "rb").read() == original
