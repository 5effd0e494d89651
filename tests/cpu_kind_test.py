"""The suite holds on every CPU kind users have, not only on this one: under
tests/avx2_only.sh, the libraries compute as on an AVX2-only CPU (AMD EPYC
Zen 3), and the tests that compare kernels' numbers (marked `cpu_numerics`)
pass there too."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cpu_flags import cpu_is_avx2_only

REPO = Path(__file__).resolve().parents[1]


def avx2_only_environment() -> dict[str, str]:
    """This process's environment with tests/avx2_only.sh sourced."""
    done = subprocess.run(
        ["bash", "-c", f". {REPO / 'tests' / 'avx2_only.sh'} && env -0"], capture_output=True, check=True
    )
    return dict(entry.split("=", 1) for entry in done.stdout.decode().split("\0") if entry)


@pytest.mark.slow
@pytest.mark.backend_free
def test_the_avx2_only_setting_takes_effect():
    """TensorFlow without oneDNN, XLA's compiler held to AVX2 (its own log
    line says so)."""
    script = (
        "import jax, jax.numpy as jnp\n"
        "from keras_bert3.upstream.onednn_flag import tensorflow_uses_onednn\n"
        "jax.jit(lambda a: jnp.tanh(a @ a))(jnp.ones((8, 8))).block_until_ready()\n"
        "print(tensorflow_uses_onednn())\n"
    )
    environment = avx2_only_environment() | {"TF_CPP_MIN_LOG_LEVEL": "0", "TF_CPP_VMODULE": "cpu_compiler=1"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[-1] == "False"
    assert "`xla_cpu_max_isa` is set. Will not use features newer than: AVX2" in done.stderr


# Both nested runs (the TensorFlow one, about 50 s; the JAX one, 20 s) pick
# their backend themselves: one pass runs them.
@pytest.mark.slow
@pytest.mark.both_backends
@pytest.mark.skipif(
    cpu_is_avx2_only(), reason="this CPU is AVX2-only: every pass of the suite already ran these tests so"
)
@pytest.mark.parametrize("backend, folder", [("tensorflow", "tests"), ("jax", "tests/ops")])
def test_the_cpu_numerics_tests_pass_as_on_an_avx2_only_cpu(backend, folder):
    """Every `cpu_numerics` test on TensorFlow but the ONNX ones, and those of
    tests/ops/ on JAX (the JAX kernels), in a pytest run of its own under
    tests/avx2_only.sh. About 70 tests, among them MiniLM's bfloat16 exports:
    the TensorFlow run takes most of a minute, being those tests again in a
    process of their own, which is what is tested."""
    environment = avx2_only_environment() | {"KERAS_BACKEND": backend}
    environment.pop("KERAS_BERT3_ONE_PASS_CLAIMS", None)  # Every test of the selection, one-pass ones too.
    # Not the ONNX exports' tests: onnxruntime picks its kernels from the CPU's flags, which no setting holds back
    # (tests/avx2_only.sh), so they would compute here as in the pass that already ran them.
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            "cpu_numerics",
            "--ignore-glob",
            "*/onnx_*",
            folder,
        ],
        capture_output=True,
        text=True,
        env=environment,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stdout[-6000:]
    assert " passed" in done.stdout.splitlines()[-1], done.stdout[-3000:]
