"""On JAX, fine-tuning on raw texts of any length compiles few step programs
(one per length bucket: `fixed_shapes`), and a second run of the same job
compiles none: JAX's persistent compilation cache is on by default
(`keras_bert3.training.jax_compilation_cache`). A cache folder that cannot be
written gives a one-line warning, and training goes on."""

import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_on_jax(arguments: list[str], **environment) -> subprocess.CompletedProcess:
    env = {name: value for name, value in os.environ.items() if name != "JAX_COMPILATION_CACHE_DIR"}
    env.update(KERAS_BACKEND="jax", **environment)
    return subprocess.run([sys.executable, *arguments], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
@pytest.mark.both_backends
def test_fine_tuning_compiles_one_step_per_bucket_and_nothing_when_run_again(tmp_path, minilm_dir):
    runs = []
    for _ in range(2):
        done = run_on_jax(["-m", "tests.models.fit_compilations", minilm_dir], KERAS_BERT3_COMPILATION_CACHE=str(tmp_path))
        assert done.returncode == 0, done.stderr[-3000:]
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    first, second = runs
    assert first["cache"] == second["cache"] == str(tmp_path)
    assert first["buckets"] == [32, 64, 128]
    # Texts of 1 to 400 words meet every bucket, and no other shape: one
    # program per bucket for training, evaluation and prediction alike.
    assert first["compiled"]["train_step"] == 3
    assert first["compiled"]["test_step"] <= 3 and first["compiled"]["predict_step"] <= 3
    assert not first["cache_hits"].get("train_step")
    # The second run compiles nothing: each step program comes from the cache.
    for step in ("train_step", "test_step", "predict_step"):
        assert second["cache_hits"].get(step, 0) == second["compiled"][step] == first["compiled"][step]
    assert second["loss"] == first["loss"] and second["scores"] == first["scores"]  # The same job, the same numbers.


@pytest.mark.slow
@pytest.mark.both_backends
def test_steps_compiled_ahead_are_the_programs_fit_runs(tmp_path, minilm_dir):
    """`PrecompileTrainSteps` compiles each bucket's step before the first
    batch; `fit` then finds every one of its step programs in the cache, and
    trains exactly as without it (same shuffles, same losses)."""
    ahead = run_on_jax(["-m", "tests.models.fit_compilations", minilm_dir, "precompile"],
                       KERAS_BERT3_COMPILATION_CACHE=str(tmp_path / "ahead"))  # fmt: skip
    plain = run_on_jax(["-m", "tests.models.fit_compilations", minilm_dir], KERAS_BERT3_COMPILATION_CACHE=str(tmp_path / "plain"))
    assert ahead.returncode == 0 and plain.returncode == 0, ahead.stderr[-3000:] + plain.stderr[-3000:]
    ahead, plain = (json.loads(run.stdout.strip().splitlines()[-1]) for run in (ahead, plain))
    assert ahead["precompiled"] == 3
    assert ahead["compiled"]["train_step"] == 6 and ahead["cache_hits"]["train_step"] == 3  # fit's three: from the cache.
    assert ahead["loss"] == plain["loss"] and ahead["scores"] == plain["scores"]


@pytest.mark.both_backends
def test_the_cache_can_be_moved_turned_off_and_survives_an_unwritable_folder(tmp_path):
    show = ["-c", "import keras_bert3, jax; print(jax.config.jax_compilation_cache_dir)"]
    assert run_on_jax(show, KERAS_BERT3_COMPILATION_CACHE=str(tmp_path / "moved")).stdout.split()[-1] == str(tmp_path / "moved")
    assert run_on_jax(show, KERAS_BERT3_COMPILATION_CACHE="off").stdout.split()[-1] == "None"
    assert run_on_jax(show, JAX_COMPILATION_CACHE_DIR=str(tmp_path / "users")).stdout.split()[-1] == str(tmp_path / "users")
    default = run_on_jax(show, XDG_CACHE_HOME=str(tmp_path / "home"))
    assert default.stdout.split()[-1] == str(tmp_path / "home" / "keras_bert3" / "jax_compilation_cache")
    blocked = tmp_path / "a_file"
    blocked.write_text("not a folder")
    unwritable = run_on_jax(show, KERAS_BERT3_COMPILATION_CACHE=str(blocked / "cache"))
    assert unwritable.returncode == 0 and unwritable.stdout.split()[-1] == "None"
    warnings = [line for line in unwritable.stderr.splitlines() if "compilation cache is off" in line]
    assert len(warnings) == 1 and str(blocked / "cache") in warnings[0] and "KERAS_BERT3_COMPILATION_CACHE" in warnings[0]
