"""A pretraining run killed with SIGKILL at any moment, inside a checkpoint's
write included, or stopped by SIGTERM or Ctrl-C (SIGINT) to the `keras-bert3`
command between two steps or while a checkpoint is written, resumes exactly
from its last complete checkpoint with the same command; broken or foreign
checkpoints are refused."""

import json
import os
import shutil
import signal
import subprocess
import sys

import keras
import pytest

from keras_bert3.optimizers.linear_warmup_decay import LinearWarmupLinearDecay
from keras_bert3_demo.default_corpus import default_corpus_documents
from tests import warm_commands
from tests.named_moment import BATCH_END
from tests.named_moment import CHECKPOINT_RENAME
from tests.named_moment import CHECKPOINT_START
from tests.named_moment import OLDER_REMOVAL
from tests.named_moment import WEIGHTS_ARRAY
from tests.named_moment import moment_environment
from tests.named_moment import wait_for_the_moment
from tests.training.pretrain_command import EVERY
from tests.training.pretrain_command import LEARNING_RATE
from tests.training.pretrain_command import REPO
from tests.training.pretrain_command import STEPS
from tests.training.pretrain_command import WARMUP
from tests.training.pretrain_command import checkpoints
from tests.training.pretrain_command import command
from tests.training.pretrain_command import preset_arrays
from tests.training.pretrain_command import read_history
from tests.training.pretrain_command import refusal
from tests.training.pretrain_command import with_flags

# Six epochs of 10 steps; each run resumes where the one before stopped, the last one runs to the end.
# (moment, its call in the process, what happens then: SIGKILL, or the test's signal to the command,
# the complete checkpoints then, a half-written one left behind).
STOPS = [
    (BATCH_END, 15, "kill", ["checkpoint-1"], False),  # Mid-epoch, between two checkpoints.
    (WEIGHTS_ARRAY, 20, "kill", ["checkpoint-1"], True),  # Inside checkpoint 2's weights file.
    (CHECKPOINT_START, 1, "kill", ["checkpoint-1"], False),  # Epoch 2 logged in history.csv, its checkpoint not begun.
    (CHECKPOINT_RENAME, 1, "kill", ["checkpoint-1"], True),  # Checkpoint 2 written in full, not yet renamed.
    (OLDER_REMOVAL, 1, "kill", ["checkpoint-1", "checkpoint-2"], False),  # Renamed; checkpoint 1 not yet removed.
    (BATCH_END, 5, signal.SIGTERM, ["checkpoint-2+5"], False),  # Preempted at step 25: a checkpoint of it.
    (BATCH_END, 8, "kill", ["checkpoint-3"], False),  # After the rest of epoch 3 (5 batches) and 3 of epoch 4.
    (CHECKPOINT_RENAME, 1, signal.SIGINT, ["checkpoint-4"], False),  # Ctrl-C inside checkpoint 4's write.
]

# The backend of the chain's runs (see its docstring): a run's process costs less CPU on TensorFlow, which
# traces its steps, than on JAX, which compiles them (the whole chain, AMD EPYC Zen 3: 174 and 176 s of CPU
# against 207 and 214 s on JAX).
CHAIN_ENVIRONMENT = dict(os.environ, KERAS_BACKEND="tensorflow")


def stopped_run(arguments, moment, call, then, workdir):
    """Runs the command with ARGUMENTS until `moment`'s `call`th call, where it
    dies of SIGKILL (`python -m keras_bert3`), or, waiting there, gets `then`
    (a signal) from here through `keras-bert3` (the command users run, which
    passes signals on to its process); returns its own lines on stderr."""
    if then == "kill":
        started = [sys.executable, "-m", "keras_bert3", *arguments]
        environment = moment_environment(moment, call, "kill", CHAIN_ENVIRONMENT)
    else:
        launcher = shutil.which("keras-bert3")
        assert launcher, "the keras-bert3 command is not installed: pip install -e ."
        started = [launcher, *arguments]
        environment = {
            k: v for k, v in CHAIN_ENVIRONMENT.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "KERAS_BERT3_DEBUG")
        }
        environment = moment_environment(moment, call, "wait", environment)
    with open(workdir / "stderr.txt", "w+", encoding="utf-8") as stderr:
        process = warm_commands.Popen(
            started, cwd=REPO, env=environment, stdout=subprocess.PIPE, stderr=stderr, text=True
        )
        if then != "kill":
            wait_for_the_moment(process)
            process.send_signal(then)  # To the launcher alone, as Kubernetes signals a container's first process.
        process.stdout.read()
        code = process.wait(timeout=300)
        stderr.seek(0)
        said = stderr.read()
    assert code == (-signal.SIGKILL if then == "kill" else 128 + then), (moment, code, said[-3000:])
    return [line for line in said.splitlines() if line.startswith("keras-bert3 pretrain: ")]


@pytest.mark.slow
@pytest.mark.both_backends
def test_killed_or_stopped_at_any_moment_resumes_exactly(tmp_path, small_corpus, run_vocabulary):
    """Killed with SIGKILL at each moment of STOPS in turn (between checkpoints,
    inside a checkpoint's write, between the history row and the checkpoint,
    around the checkpoint's rename), stopped by SIGTERM between two steps and
    by SIGINT while a checkpoint is written, and rerun each time with the same
    command, the run ends as an uninterrupted one (run beside it) does: the
    same history, row for row (no step twice, none missing; the epoch SIGTERM
    cut reports the mean over all its steps), and the same final weights, to
    the bit. That needs the same examples, masks, weights, optimizer state,
    metric sums and dropout draws after every resume.

    Over a minute: ten short runs of the command, each its own process (a kill
    ends one). They run on TensorFlow, in one pass: what a kill or a signal leaves
    on disk, and the resume from it, are the same code on either backend; the
    state each backend restores (weights, optimizer, random and metric
    states) is tested here for TensorFlow (the SIGTERM stop mid-epoch) and by
    the next test for JAX."""
    uninterrupted = warm_commands.Popen(
        command(run_vocabulary(tmp_path / "uninterrupted"), small_corpus),
        cwd=REPO,
        env=CHAIN_ENVIRONMENT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    output = run_vocabulary(tmp_path / "run")
    for moment, call, then, complete, half_written in STOPS:
        said = stopped_run(command(output, small_corpus)[3:], moment, call, then, tmp_path)
        if then != "kill":
            step = {BATCH_END: 25, CHECKPOINT_RENAME: 40}[moment]
            assert said == [
                f"keras-bert3 pretrain: Stopped by {signal.Signals(then).name} at step {step}: wrote the checkpoint "
                f"{output}/backup/{complete[-1]}. Run the same command to resume from it."
            ], said
        assert checkpoints(output)[0] == complete, (moment, checkpoints(output))
        assert bool(checkpoints(output)[1]) == half_written, (moment, checkpoints(output))
        steps = [int(row["step"]) for row in read_history(output)]
        assert steps == sorted(set(steps)), (moment, steps)  # A row may lead its checkpoint; never twice.
    finished = warm_commands.run(command(output, small_corpus), cwd=REPO, env=CHAIN_ENVIRONMENT, capture_output=True)
    assert finished.returncode == 0, finished.stderr.decode()[-3000:]
    assert checkpoints(output) == (["checkpoint-6"], [])

    _, stderr = uninterrupted.communicate(timeout=300)
    assert uninterrupted.returncode == 0, stderr.decode()[-3000:]
    rows, expected = read_history(output), read_history(tmp_path / "uninterrupted")
    assert [r["step"] for r in rows] == [str(step) for step in range(EVERY, STEPS + 1, EVERY)]
    assert rows == expected  # Losses, learning rates, steps: every column, as the CSV writes them.
    schedule = LinearWarmupLinearDecay(LEARNING_RATE, WARMUP, STEPS)  # The schedule where each step puts it.
    for row in rows:
        assert abs(float(row["learning_rate"]) - float(schedule(int(row["step"])))) < 1e-9
    assert float(rows[-1]["mlm_loss"]) < float(rows[0]["mlm_loss"]) - 0.5  # It trained.
    arrays, reference = preset_arrays(output), preset_arrays(tmp_path / "uninterrupted")
    assert arrays.keys() == reference.keys() and len(arrays) > 10
    for key, value in reference.items():
        assert (arrays[key] == value).all(), key
    assert os.path.isfile(output / "training_curves.png")


@pytest.mark.slow
@pytest.mark.skipif(
    keras.backend.backend() == CHAIN_ENVIRONMENT["KERAS_BACKEND"],
    reason="the chain above runs on this backend, and its SIGTERM stop is this one, mid-epoch, resumed to the bit",
)
def test_a_run_stopped_mid_epoch_resumes_exactly_on_this_backend(tmp_path, small_corpus, run_vocabulary):
    """The backend's part of the test above, on the backends other than the
    chain's (TensorFlow): a run that a SIGTERM stops
    mid-epoch (a `keras-bert3 pretrain` process of its own, signalled at a
    named moment, after its 15th step: a checkpoint of step 15), resumed by
    the same command here, ends with an uninterrupted run's history and final
    weights, to the bit: this backend restores weights, optimizer, dropout's
    random state and the cut epoch's metric sums exactly. One to two minutes:
    three runs of 20 steps, one of them a process of its own."""
    from keras_bert3.cli import main

    def arguments(output):
        return with_flags(command(run_vocabulary(output), small_corpus), steps=20)

    assert main(arguments(tmp_path / "uninterrupted")[3:]) == 0
    output = tmp_path / "run"
    stopped = warm_commands.run(
        arguments(output), cwd=REPO, env=moment_environment(BATCH_END, 15, "sigterm"), capture_output=True, text=True
    )
    assert stopped.returncode == 128 + signal.SIGTERM, stopped.stderr[-3000:]
    assert checkpoints(output) == (["checkpoint-1+5"], [])
    assert main(arguments(output)[3:]) == 0
    assert read_history(output) == read_history(tmp_path / "uninterrupted")
    arrays, reference = preset_arrays(output), preset_arrays(tmp_path / "uninterrupted")
    assert arrays.keys() == reference.keys() and len(arrays) > 10
    for key, value in reference.items():
        assert (arrays[key] == value).all(), key


@pytest.mark.slow
@pytest.mark.one_pass
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

    checkpoint = output / "backup" / "checkpoint-1" / "model.weights.h5"
    checkpoint.write_bytes(checkpoint.read_bytes()[:1000])
    assert main(args) == 2
    said = capsys.readouterr().err
    assert "Cannot resume from the checkpoint" in said and str(checkpoint.parent) in said


@pytest.mark.slow
@pytest.mark.one_pass
def test_packed_rows_train_and_resume_with_the_same_flags(tmp_path, small_corpus, run_vocabulary, capsys):
    """`--packed-length`: pairs of 64 tokens packed into rows of 128 train; rows
    shorter than the pairs are refused before anything runs. One pass: packed
    training on each backend is tested in tests/models/packed_pretraining_test.py."""
    from keras_bert3.cli import main

    args = command(run_vocabulary(tmp_path / "run"), small_corpus)[3:] + ["--packed-length", "128"]
    args[args.index("--steps") + 1] = "10"
    args[args.index("--checkpoint-every") + 1] = "5"
    assert main(args) == 0
    rows = read_history(tmp_path / "run")
    assert [row["step"] for row in rows] == ["5", "10"]
    assert all(0 < float(row["mlm_loss"]) < 20 and 0 < float(row["nsp_loss"]) < 2 for row in rows)
    unpacked = [a for a in args if a not in ("--packed-length", "128")]
    capsys.readouterr()
    assert main(unpacked) == 2  # Another setting than the checkpoint's.
    assert "packed_length: 128 -> None" in capsys.readouterr().err
    assert main(args[:-1] + ["32"]) == 2
    assert "--packed-length 32 must be at least --sequence-length 64" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.one_pass
def test_every_data_setting_reaches_the_run(tmp_path, small_corpus, run_vocabulary):
    """Flags of the data configs that the run did not take before the
    settings tree: a corpus of paragraphs, whole-word masking, a smaller
    shuffle buffer; run.json records them in their configs. It trains
    exactly --steps, a --checkpoint-every that does not divide it too. One pass: the
    settings reach the data pipeline, which is TensorFlow on either backend."""
    from keras_bert3.cli import main

    args = command(run_vocabulary(tmp_path / "run"), small_corpus)[3:]
    args[args.index("--steps") + 1] = "5"
    args[args.index("--checkpoint-every") + 1] = "3"  # Not a divisor: the last interval is shorter.
    flags = ["--file-format", "paragraphs", "--whole-word-masking", "--masked-lm-prob", "0.2", "--shuffle-buffer", "64"]
    args[args.index("--warmup-steps") + 1] = "2"
    assert main(args + flags) == 0
    recorded = json.loads((tmp_path / "run" / "run.json").read_text())
    assert recorded["pairing"]["file_format"] == "paragraphs" and recorded["batching"]["shuffle_buffer"] == 64
    assert recorded["masking"] == {"max_predictions_per_seq": 10, "masked_lm_prob": 0.2, "whole_word_masking": True}
    assert [row["step"] for row in read_history(tmp_path / "run")] == ["3", "5"]  # --steps 5 steps, not 6.


@pytest.mark.parametrize(
    "flag, value, message",
    [
        ("--batch-size", "0", "--batch-size 0 must be at least 1"),
        ("--steps", "-5", "--steps -5 must be at least 1"),
        ("--checkpoint-every", "0", "--checkpoint-every 0 must be at least 1"),
        (
            "--max-predictions-per-seq",
            "64",
            "--max-predictions-per-seq 64 is larger than the sequence: --sequence-length 64 leaves at most 61 "
            "maskable tokens (BERT masks 15% of tokens: 10 here)",
        ),
        ("--sequence-length", "3", "--sequence-length 3 must be at least 5"),
        ("--learning-rate", "0", "--learning-rate 0.0 must be positive"),
        ("--warmup-steps", "60", "--warmup-steps 60 must be at least 0 and below --steps 60"),
        ("--vocabulary-size", "0", "--vocabulary-size 0 must be at least 1"),
    ],
)
@pytest.mark.one_pass
def test_settings_a_run_cannot_use_are_refused_before_anything_runs(
    tmp_path, small_corpus, capsys, flag, value, message
):
    from keras_bert3.cli import main

    args = command(tmp_path / "run", small_corpus)[3:]  # The CLI's own arguments, run in this process.
    args[args.index(flag) + 1] = value
    assert main(args) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("keras-bert3 pretrain: ") and message in errors[0], errors
    assert not os.path.exists(tmp_path / "run")  # Nothing written: no vocabulary learnt, no model built.


@pytest.mark.one_pass
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


@pytest.mark.slow
@pytest.mark.both_backends
def test_batch_not_divisible_by_the_replicas_is_refused(tmp_path, small_corpus):
    # Eight virtual JAX devices split the batch; 12 examples do not split over 8.
    args = command(tmp_path / "run", small_corpus, "--strategy", "data_parallel")
    args[args.index("--batch-size") + 1] = "12"
    env = dict(
        os.environ,
        KERAS_BACKEND="jax",
        XLA_FLAGS=os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8",
    )
    result = warm_commands.run(args, cwd=REPO, capture_output=True, text=True, env=env)
    assert result.returncode == 2
    assert "--batch-size 12 does not split evenly over the 8 replicas" in result.stderr


@pytest.mark.slow
def test_two_workers_pretrain_from_their_own_files(tmp_path, small_corpus, run_vocabulary):
    """`keras-bert3 pretrain --strategy` with two worker processes on localhost
    (TF MultiWorkerMirroredStrategy; JAX data_parallel over two processes), the
    corpus in two files: both finish, with the same (global) history. Each
    worker is given the run's vocabulary, as a resumed run is (without one, a
    worker learns it from the whole corpus, as one process does: the same code).

    About a minute on JAX: two whole runs side by side, whose two processes
    meet at every step over localhost."""
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
        environments = [
            {"TF_CONFIG": json.dumps({"cluster": {"worker": workers}, "task": {"type": "worker", "index": i}})}
            for i in range(2)
        ]
    else:
        address, strategy = f"localhost:{free_port()}", "data_parallel"
        environments = [
            {
                "KERAS_DISTRIBUTION_JOB_ADDRESSES": address,
                "KERAS_DISTRIBUTION_NUM_PROCESSES": "2",
                "KERAS_DISTRIBUTION_PROCESS_ID": str(i),
            }
            for i in range(2)
        ]
    processes = []
    for index, environment in enumerate(environments):
        args = with_flags(
            command(run_vocabulary(tmp_path / f"worker{index}"), str(tmp_path / "part*.txt"), "--strategy", strategy),
            steps=10,
            checkpoint_every=5,
        )
        processes.append(
            warm_commands.Popen(
                args, cwd=REPO, env=dict(os.environ, **environment), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
            )
        )
    for process in processes:
        _, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stderr.decode()[-3000:]
    first, second = read_history(tmp_path / "worker0"), read_history(tmp_path / "worker1")
    assert [row["step"] for row in first] == ["5", "10"]
    for a, b in zip(first, second):
        assert abs(float(a["loss"]) - float(b["loss"])) < 1e-5


@pytest.fixture(scope="module")
def real_sentences():
    return [sentence for document in default_corpus_documents()[:200] for sentence in document]


@pytest.mark.one_pass
def test_a_corpus_that_is_not_text_is_refused_before_anything_runs(tmp_path, capsys):
    """A program given as the corpus (it would train: invalid UTF-8 is repaired line by line)."""
    import shutil

    from keras_bert3.cli import main

    program = tmp_path / "corpus" / "part-1.txt"
    program.parent.mkdir()
    shutil.copy(shutil.which("ls") or sys.executable, program)
    code, errors = refusal(main, command(tmp_path / "run", str(tmp_path / "corpus" / "*.txt"))[3:], capsys)
    assert code == 2 and len(errors) == 1, errors
    assert f"{program} is not text: " in errors[0] and "lines are not UTF-8 text" in errors[0], errors
    assert not os.path.exists(tmp_path / "run" / "vocabulary.txt")  # Refused before the vocabulary was learnt.


@pytest.mark.one_pass
@pytest.mark.slow
def test_a_corpus_that_cannot_make_one_batch_is_refused_before_the_model(
    tmp_path, capsys, run_vocabulary, real_sentences
):
    from keras_bert3.cli import main

    # One document: next sentence prediction has no other document to draw from.
    single = tmp_path / "single.txt"
    single.write_text("\n".join(real_sentences[:300]) + "\n", encoding="utf-8")
    code, errors = refusal(main, command(run_vocabulary(tmp_path / "one"), str(single))[3:], capsys)
    assert code == 2 and len(errors) == 1, errors
    assert f"--corpus {single}: The corpus has a single document" in errors[0] and "pass --no-nsp" in errors[0], errors
    assert not os.path.exists(tmp_path / "one" / "backup")  # No model built, nothing trained.

    # One line of 300 sentences, without NSP: one example, not a batch of 8.
    line = tmp_path / "line.txt"
    line.write_text(" ".join(real_sentences[:300]) + "\n", encoding="utf-8")
    code, errors = refusal(main, command(run_vocabulary(tmp_path / "line"), str(line), "--no-nsp")[3:], capsys)
    assert code == 2 and len(errors) == 1, errors
    assert f"--corpus {line} cannot make one batch of --batch-size 8 examples" in errors[0], errors
    assert not os.path.exists(tmp_path / "line" / "preset")


@pytest.mark.slow
@pytest.mark.one_pass
def test_repaired_text_is_reported_in_one_line(tmp_path, caplog, run_vocabulary, real_sentences):
    """A corpus with invalid UTF-8 in some lines trains, and says so (a warning
    of the `keras_bert3.data` logger: one line on stderr, where pytest captures it)."""
    from keras_bert3.cli import main

    corpus = tmp_path / "mixed.txt"
    with open(corpus, "wb") as f:
        for index, sentence in enumerate(real_sentences[:2000]):
            encoded = sentence.encode("utf-8")
            f.write((encoded[:5] + b"\xff\xc3" + encoded[5:] if index % 4 == 0 else encoded) + b"\n")
            if index % 10 == 9:
                f.write(b"\n")
    args = command(run_vocabulary(tmp_path / "run"), str(corpus))[3:]
    args[args.index("--steps") + 1] = "10"
    assert main(args) == 0
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Pretraining data so far: ")]
    assert lines and "sentences of invalid UTF-8 (kept, bad bytes replaced by U+FFFD)" in lines[0], lines
    repaired = int(lines[-1].split("Pretraining data so far: ")[1].split(" sentences")[0].replace(",", ""))
    assert 0 < repaired <= 500  # Every 4th of the first 2,000 sentences, as far as the run read.
