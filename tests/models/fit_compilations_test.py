"""On JAX, fine-tuning on raw texts of any length compiles few step programs
(one per length bucket: `fixed_shapes`), and a second run of the same job
compiles none: JAX's persistent compilation cache is on by default from a
model's first compile (`keras_bert3.distribution.jax_compilation_cache`),
and importing keras_bert3 changes none of JAX's settings. A cache folder that cannot be
written gives a one-line warning, and training goes on."""

import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_on_jax(arguments: list[str], **environment) -> subprocess.CompletedProcess:
    # Without the suite's own cache settings (tests/run_all.sh), so that keras_bert3's are the ones tested.
    suite_settings = ("JAX_COMPILATION_CACHE_DIR", "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS")
    env = {name: value for name, value in os.environ.items() if name not in suite_settings}
    env.update(KERAS_BACKEND="jax", **environment)
    return subprocess.run([sys.executable, *arguments], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
@pytest.mark.both_backends
def test_fine_tuning_compiles_one_step_per_bucket_and_nothing_when_run_again(tmp_path, minilm_dir):
    """The step a GPU runs (bfloat16 compute, float32 weights), on this CPU.
    The first run fills a new cache with `PrecompileTrainSteps` (what `fit`
    adds on accelerators for several buckets); the second, the same job
    without it, compiles nothing. About a minute, more on a CPU without
    bfloat16 instructions (AMD EPYC Zen 3), where bfloat16 is emulated: two
    processes, the first compiling each bucket's steps, each fitting,
    evaluating and predicting 300 texts."""
    script = ["-m", "tests.models.fit_compilations", minilm_dir, "mixed_bfloat16"]
    runs = []
    for arguments in (["precompile"], []):
        done = run_on_jax(script + arguments, KERAS_BERT3_COMPILATION_CACHE=str(tmp_path / "cache"))
        assert done.returncode == 0, done.stderr[-3000:]
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    ahead, second = runs
    assert ahead["cache"] == second["cache"] == str(tmp_path / "cache")
    assert ahead["buckets"] == [32, 64, 128]
    # Texts of 1 to 400 words meet every bucket, and no other shape: one
    # program per bucket for training, evaluation and prediction alike.
    # `PrecompileTrainSteps` compiles each bucket's step before the first
    # batch; fit's own three then come from the (new) cache.
    assert ahead["precompiled"] == 3
    assert ahead["compiled"]["train_step"] == 6 and ahead["cache_hits"]["train_step"] == 3
    assert ahead["compiled"]["test_step"] <= 3 and ahead["compiled"]["predict_step"] <= 3
    # The second run compiles nothing: each step program comes from the cache,
    # and without the precompiling the training is exactly the same (shuffles, losses).
    assert second["precompiled"] == 0 and second["compiled"]["train_step"] == 3
    for step in ("train_step", "test_step", "predict_step"):
        assert second["cache_hits"].get(step, 0) == second["compiled"][step]
    for step in ("test_step", "predict_step"):
        assert second["compiled"][step] == ahead["compiled"][step]
    assert second["loss"] == ahead["loss"] and second["scores"] == ahead["scores"]  # The same job, the same numbers.


CACHE_SETTINGS = """
import json, os, warnings
import jax
import keras_bert3
from keras_bert3.distribution.jax_compilation_cache import enable_jax_compilation_cache

def chosen(**environment):
    jax.config.update("jax_compilation_cache_dir", None)
    for name in ("KERAS_BERT3_COMPILATION_CACHE", "XDG_CACHE_HOME"):
        os.environ.pop(name, None)
    os.environ.update(environment)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        path = enable_jax_compilation_cache()
    return {"path": path, "warnings": [str(w.message) for w in caught]}

root = os.environ["ROOT"]
results = {
    "moved": chosen(KERAS_BERT3_COMPILATION_CACHE=os.path.join(root, "moved")),
    "off": chosen(KERAS_BERT3_COMPILATION_CACHE="off"),
    "default": chosen(XDG_CACHE_HOME=os.path.join(root, "home")),
    "unwritable": chosen(KERAS_BERT3_COMPILATION_CACHE=os.path.join(root, "a_file", "cache")),
}
jax.config.update("jax_compilation_cache_dir", os.path.join(root, "users"))  # The user's choice through JAX wins.
results["users"] = {"path": enable_jax_compilation_cache()}
print(json.dumps(results))
"""


@pytest.mark.slow
@pytest.mark.both_backends
def test_the_cache_can_be_moved_turned_off_and_survives_an_unwritable_folder(tmp_path):
    (tmp_path / "a_file").write_text("not a folder")
    done = run_on_jax(["-c", CACHE_SETTINGS], ROOT=str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert results["moved"] == {"path": str(tmp_path / "moved"), "warnings": []}
    assert results["off"] == {"path": None, "warnings": []}
    assert results["default"]["path"] == str(tmp_path / "home" / "keras_bert3" / "jax_compilation_cache")
    assert results["users"]["path"] == str(tmp_path / "users")
    unwritable = results["unwritable"]
    assert unwritable["path"] is None and len(unwritable["warnings"]) == 1
    assert str(tmp_path / "a_file" / "cache") in unwritable["warnings"][0]
    assert "KERAS_BERT3_COMPILATION_CACHE" in unwritable["warnings"][0]
    # And the default, in a process of its own: importing keras_bert3 changes none of JAX's settings; the
    # first compile of one of its models points the cache at keras_bert3's folder.
    script = (
        "import jax; before = jax.config.values.copy(); import keras_bert3; "
        "print('import:', jax.config.values == before, jax.config.jax_compilation_cache_dir); "
        "keras_bert3.BertPretrainer(keras_bert3.BertBackbone(100, 2, 2, 8, 16)).compile(); "
        "print('compile:', jax.config.jax_compilation_cache_dir)"
    )
    imported = run_on_jax(["-c", script], XDG_CACHE_HOME=str(tmp_path / "fresh"))
    assert imported.returncode == 0, imported.stderr[-3000:]
    said = [line for line in imported.stdout.splitlines() if line.startswith(("import:", "compile:"))]
    assert said == ["import: True None", f"compile: {tmp_path / 'fresh' / 'keras_bert3' / 'jax_compilation_cache'}"]
