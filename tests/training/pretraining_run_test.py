"""A pretraining run killed with SIGKILL resumes exactly from its last checkpoint with
the same command; broken or foreign checkpoints are refused."""

import csv
import os
import signal
import subprocess
import sys
import time

import pytest

from keras_bert3.corpora.default_corpus import default_corpus_documents
from keras_bert3.optimizers.linear_warmup_decay import LinearWarmupLinearDecay

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STEPS, EVERY, LEARNING_RATE, WARMUP = 60, 10, 1e-3, 5


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory):
    """200 documents of the embedded corpus, in the original format."""
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text("\n\n".join("\n".join(d) for d in default_corpus_documents()[:200]) + "\n", encoding="utf-8")
    return str(path)


def command(output, corpus, *extra):
    return [
        sys.executable, "-m", "keras_bert3", "pretrain", "--output", str(output), "--corpus", corpus,
        "--model", "tiny", "--steps", str(STEPS), "--checkpoint-every", str(EVERY), "--batch-size", "8",
        "--sequence-length", "64", "--max-predictions-per-seq", "10", "--vocabulary-size", "1500",
        "--learning-rate", str(LEARNING_RATE), "--warmup-steps", str(WARMUP), "--verbose", "2", *extra,
    ]  # fmt: skip


def read_history(output):
    with open(os.path.join(output, "history.csv"), newline="") as f:
        return list(csv.DictReader(f))


def completed_epochs(output):
    path = os.path.join(output, "backup", "training_metadata.json")
    if not os.path.isfile(path):
        return 0
    with open(path) as f:
        text = f.read()
    return int(text.split('"epoch":')[1].split(",")[0]) if '"epoch":' in text else 0


@pytest.mark.slow
def test_killed_run_resumes_exactly(tmp_path, small_corpus, run_vocabulary):
    """Killed with SIGKILL after a checkpoint and rerun, the run goes on as an
    uninterrupted one (run beside it) does: the same steps, learning rates and
    losses, which needs the same examples, masks, weights, optimizer state and
    dropout draws."""
    uninterrupted = subprocess.Popen(command(run_vocabulary(tmp_path / "uninterrupted"), small_corpus), cwd=REPO,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    output = run_vocabulary(tmp_path / "run")
    process = subprocess.Popen(command(output, small_corpus), cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    while completed_epochs(output) < 2 and process.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    assert process.poll() is None, "the run ended before it could be killed"
    process.send_signal(signal.SIGKILL)
    process.wait()
    killed_at = completed_epochs(output)
    assert 2 <= killed_at < STEPS // EVERY
    rows_before = read_history(output)

    subprocess.run(command(output, small_corpus), cwd=REPO, check=True, capture_output=True)
    rows = read_history(output)
    resumed = rows[len(rows_before):]
    # The resumed run goes on from the checkpoint's step, not from 0 ...
    assert [int(r["step"]) for r in resumed] == list(range((killed_at + 1) * EVERY, STEPS + 1, EVERY))
    # ... with the learning-rate schedule where that step puts it ...
    schedule = LinearWarmupLinearDecay(LEARNING_RATE, WARMUP, STEPS)
    for row in resumed:
        assert abs(float(row["learning_rate"]) - float(schedule(int(row["step"])))) < 1e-9
    # ... and with the trained weights: its loss continues, far below the first epoch's ...
    assert float(resumed[0]["mlm_loss"]) < float(rows[0]["mlm_loss"]) - 0.5
    # ... exactly as the uninterrupted run's (any other batch or dropout draw moves the losses by 1e-5 or more).
    _, stderr = uninterrupted.communicate(timeout=300)
    assert uninterrupted.returncode == 0, stderr.decode()[-3000:]
    expected = read_history(tmp_path / "uninterrupted")
    assert [r["step"] for r in expected] == [r["step"] for r in rows]
    for row, reference in zip(rows, expected):
        for key in ("loss", "mlm_loss", "nsp_loss"):
            assert abs(float(row[key]) - float(reference[key])) <= 1e-6 * abs(float(reference[key])), (key, row, reference)
    assert os.path.isfile(output / "training_curves.png")
    assert os.path.isfile(output / "preset" / "pretraining_heads.weights.h5")


@pytest.mark.slow
def test_foreign_or_corrupt_checkpoints_are_refused(tmp_path, small_corpus, run_vocabulary, capsys):
    """Run in this process through `keras_bert3.cli.main` (the killed run above
    covers `python -m keras_bert3`): exit code 2 and the reason."""
    from keras_bert3.cli import main

    output = run_vocabulary(tmp_path / "run")
    args = command(output, small_corpus)[3:]  # After `python -m keras_bert3`.
    args[args.index("--steps") + 1] = "10"
    assert main(args) == 0

    capsys.readouterr()
    assert main([("mini" if a == "tiny" else a) for a in args]) == 2
    assert "other settings (model: 'tiny' -> 'mini')" in capsys.readouterr().err

    checkpoint = output / "backup" / "latest.weights.h5"
    checkpoint.write_bytes(checkpoint.read_bytes()[:1000])
    assert main(args) == 2
    refusal = capsys.readouterr().err
    assert "Cannot resume from the checkpoint" in refusal and "latest.weights.h5" in refusal


@pytest.mark.parametrize(
    "flag, value, message",
    [
        ("--batch-size", "0", "--batch-size 0 must be at least 1"),
        ("--steps", "-5", "--steps -5 must be at least 1"),
        ("--checkpoint-every", "0", "--checkpoint-every 0 must be at least 1"),
        ("--max-predictions-per-seq", "64", "--max-predictions-per-seq 64 must be below --sequence-length 64 (BERT masks 15% of tokens: 10 here)"),
        ("--sequence-length", "3", "--sequence-length 3 must be at least 4"),
        ("--learning-rate", "0", "--learning-rate 0.0 must be positive"),
        ("--warmup-steps", "100", "--warmup-steps 100 must be between 0 and --steps 60"),
        ("--vocabulary-size", "0", "--vocabulary-size 0 must be at least 1"),
    ],
)
def test_settings_a_run_cannot_use_are_refused_before_anything_runs(tmp_path, small_corpus, capsys, flag, value, message):
    from keras_bert3.cli import main

    args = command(tmp_path / "run", small_corpus)[3:]  # The CLI's own arguments, run in this process.
    args[args.index(flag) + 1] = value
    assert main(args) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("keras-bert3 pretrain: ") and message in errors[0], errors
    assert not os.path.exists(tmp_path / "run")  # Nothing written: no vocabulary learnt, no model built.


def test_debug_shows_the_traceback_instead_of_the_line(tmp_path, small_corpus, capsys, monkeypatch):
    from keras_bert3.cli import main

    args = command(tmp_path / "run", small_corpus)[3:]
    args[args.index("--batch-size") + 1] = "0"
    assert main(args) == 2 and "(--debug shows where)" in capsys.readouterr().err
    with pytest.raises(ValueError, match="--batch-size 0 must be at least 1"):
        main(["--debug", *args])
    monkeypatch.setenv("KERAS_BERT3_DEBUG", "1")
    with pytest.raises(ValueError, match="--batch-size 0 must be at least 1"):
        main(args)


@pytest.mark.both_backends
def test_batch_not_divisible_by_the_replicas_is_refused(tmp_path, small_corpus):
    # Eight virtual JAX devices split the batch; 12 examples do not split over 8.
    args = command(tmp_path / "run", small_corpus, "--strategy", "data_parallel")
    args[args.index("--batch-size") + 1] = "12"
    env = dict(os.environ, KERAS_BACKEND="jax",
               XLA_FLAGS=os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8")  # fmt: skip
    result = subprocess.run(args, cwd=REPO, capture_output=True, text=True, env=env)
    assert result.returncode == 2
    assert "--batch-size 12 does not split evenly over the 8 replicas" in result.stderr


@pytest.mark.slow
def test_two_workers_pretrain_from_their_own_files(tmp_path, small_corpus):
    """`keras-bert3 pretrain --strategy` with two worker processes on localhost
    (TF MultiWorkerMirroredStrategy; JAX data_parallel over two processes), the
    corpus in two files: both finish, with the same (global) history (each
    learns the vocabulary on its own, so both must learn the same one)."""
    import json

    import keras

    from tests.distribution.distribution_test import free_port

    with open(small_corpus, encoding="utf-8") as f:
        documents = f.read().split("\n\n")
    for k in range(2):
        (tmp_path / f"part{k}.txt").write_text("\n\n".join(documents[k::2]), encoding="utf-8")
    if keras.backend.backend() == "tensorflow":
        workers = [f"localhost:{free_port()}", f"localhost:{free_port()}"]
        strategy = "multi_worker_mirrored"
        environments = [{"TF_CONFIG": json.dumps({"cluster": {"worker": workers}, "task": {"type": "worker", "index": i}})}
                        for i in range(2)]  # fmt: skip
    else:
        address, strategy = f"localhost:{free_port()}", "data_parallel"
        environments = [{"KERAS_DISTRIBUTION_JOB_ADDRESSES": address, "KERAS_DISTRIBUTION_NUM_PROCESSES": "2",
                         "KERAS_DISTRIBUTION_PROCESS_ID": str(i)} for i in range(2)]  # fmt: skip
    processes = []
    for index, environment in enumerate(environments):
        args = command(tmp_path / f"worker{index}", str(tmp_path / "part*.txt"), "--strategy", strategy)
        args[args.index("--steps") + 1] = "20"
        processes.append(subprocess.Popen(args, cwd=REPO, env=dict(os.environ, **environment),
                                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))  # fmt: skip
    for process in processes:
        _, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stderr.decode()[-3000:]
    first, second = read_history(tmp_path / "worker0"), read_history(tmp_path / "worker1")
    assert [row["step"] for row in first] == ["10", "20"]
    for a, b in zip(first, second):
        assert abs(float(a["loss"]) - float(b["loss"])) < 1e-5
