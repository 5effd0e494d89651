#!/usr/bin/env bash
# The README's test command: installs keras_bert3 with its jax, beam, onnx and test
# extras (torch CPU, transformers, the MiniLM checkpoint), then runs the whole suite on
# the TensorFlow backend and on the JAX backend. The two passes run side by
# side (most of a test's time is single-threaded tracing, compiling and process
# start-up, so two passes share two cores well); each pass's output is printed
# when both have finished. Extra arguments go to pytest, e.g.
# `bash tests/run_all.sh -k tokenizer`. Options, before pytest's:
#   --quick     the tests not marked `slow`, for the edit loop (every module of
#               keras_bert3 runs; CI runs the whole suite)
#   --coverage  line and branch coverage of keras_bert3 over both passes and
#               every Python process the tests start (coverage.py's
#               `patch = subprocess`, configured in pyproject.toml)
#   --avx2-only TensorFlow, XLA and oneDNN compute as on an AVX2-only CPU
#               (AMD EPYC Zen 3), whatever this CPU has: tests/avx2_only.sh
#   --cpu-times each test's CPU seconds, its own and those of the processes
#               it starts, per pass, then the costliest tests: tests/cpu_times.py
set -uo pipefail
cd "$(dirname "$0")/.."
measure_coverage=0
measure_cpu_times=0
selection=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) selection=(-m "not slow") ;;
    --coverage) measure_coverage=1 ;;
    --avx2-only) . tests/avx2_only.sh ;;
    --cpu-times) measure_cpu_times=1 ;;
    *) break ;;
  esac
  shift
done
# Whatever ends this script ends what it started in the background (the set-up's builds, the passes).
trap 'kill $(jobs -p) 2>/dev/null; wait' EXIT
logs=$(mktemp -d)
# Where the environment says not to write bytecode (PYTHONDONTWRITEBYTECODE, set on
# some machines, CI's among them) and the packages were installed without it
# (--no-compile, below), every Python process the tests start would compile each
# module it imports from source: `import keras_bert3` took 10 s instead of 4 s in
# each of the suite's hundreds of processes. The tests' processes keep their
# bytecode in a folder of this run's own instead (PYTHONPYCACHEPREFIX), removed at
# the end: nothing is written beside the installed sources.
if [ -n "${PYTHONDONTWRITEBYTECODE:-}" ]; then
  unset PYTHONDONTWRITEBYTECODE
  export PYTHONPYCACHEPREFIX="$logs/bytecode"
fi
# The TensorFlow that TF Serving runs, where the export tests load their exports
# (a virtual environment of its own: tests/serving_runtime.py, standard library
# only), is built beside the installs; then the corpora derived from this
# machine's Python (tests/derived_corpora.py). Both are cached, built once per machine.
KERAS_BERT3_REQUIRE_REFERENCE=1 python -m tests.serving_runtime >/dev/null &  # A failed build fails here.
serving=$!
# --no-compile: Python compiles the modules the tests import as it first imports
# them, instead of pip compiling every module of every package at install
# (torch's and JAX's, most of which no test imports: bench/history/2026-12.md, "CI in a new environment").
pip_install=(python -m pip install --quiet --disable-pip-version-check --no-compile)
"${pip_install[@]}" -e ".[jax,beam,onnx,test]" || exit 1
installed=$SECONDS
python -m tests.derived_corpora &
corpora=$!
# seqeval, the oracle of the entity scores' tests, ships only a source archive
# whose build asks for setuptools-scm; pip's isolated build fetches the newest,
# which cannot build it, so it is built here beside an older one (once: pip
# takes seconds to find it installed).
seqeval=1.2.2
if ! python -c "import importlib.metadata as m, sys; sys.exit(m.version('seqeval') != '$seqeval')" 2>/dev/null; then
  "${pip_install[@]}" "setuptools-scm<8" "setuptools>=70.1" wheel || exit 1
  "${pip_install[@]}" --no-build-isolation "seqeval==$seqeval" || exit 1
fi
wait $serving || exit 1
serving_built=$SECONDS
wait $corpora || exit 1
echo "Set-up (the installs, the TF Serving runtime, the derived corpora): $SECONDS s (installed at $installed s; the TF Serving runtime ready by $serving_built s)"
# Parity tests must run, never skip, here: a missing reference is an error.
export KERAS_BERT3_REQUIRE_REFERENCE=1
# The passes share the cores: PyTorch (the reference) gets half of them in
# each pass. With the other core busy, the MiniLM fine-tuning reference took 85 s
# on one thread against 135 s on two.
export KERAS_BERT3_TORCH_THREADS=$(( $(nproc) / 2 > 0 ? $(nproc) / 2 : 1 ))
# TensorFlow's thread pools get the same half (their sizes are read from these
# variables; code that sets its own, as prepare-data's workers do, keeps it),
# and where that half is one core XLA's matrix products run on the calling
# thread: on two cores, threads waiting on the other pass's cost more than
# they gain. Measured on 30 model and export tests (AMD EPYC, both passes):
# 342 s of CPU (206 s wall) against 323 s (196 s).
export TF_NUM_INTRAOP_THREADS=$KERAS_BERT3_TORCH_THREADS TF_NUM_INTEROP_THREADS=$KERAS_BERT3_TORCH_THREADS
[ "$KERAS_BERT3_TORCH_THREADS" = 1 ] && export XLA_FLAGS="--xla_cpu_multi_thread_eigen=false ${XLA_FLAGS:-}"
# XLA (every JAX program; TensorFlow's XLA steps) compiles for a test's few
# steps, not for speed: LLVM optimization level 0 instead of 3, and the
# element-wise fusions by XLA's older LLVM emitters instead of its MLIR
# fusion emitters. Most of a JAX test's CPU is compiling tiny programs (the
# train, test and predict steps, each eager op once per shape); the matrix
# products run in the same library calls either way. Measured (AMD EPYC
# Zen 4, JAX, one pass): five model test files (bert_classifier,
# fixed_shapes, text_classifier_export, bert_pretrainer, packed_pretraining)
# 311.6 s of CPU at level 1 with the fusion emitters, 218.9 s with the older
# emitters, 172.6 s at level 0 with them (XLA's compile 133.3, 79.8 and
# 44.8 s); tests of whole runs of many steps (the kill chain, two workers,
# the mid-epoch resume, the fifty-step recipe) 291.6 s against 261.4 s.
# Level 0 with the fusion emitters cost more than level 1 (145 s against 109 s
# on two of those files). Users' runs, the main job and bench/ keep XLA's defaults.
export XLA_FLAGS="--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false ${XLA_FLAGS:-}"
pytest=(python -m pytest)
if [ $measure_coverage = 1 ]; then
  # Absolute, so that processes started in other folders write beside the others.
  export COVERAGE_FILE="$PWD/.coverage-data/coverage"
  rm -rf .coverage-data && mkdir .coverage-data
  pytest=(python -m coverage run -m pytest)
fi
if [ $measure_cpu_times = 1 ]; then
  pytest+=(-p tests.cpu_times)
  export KERAS_BERT3_CPU_TIMES="$logs"
fi
# The Python processes the tests start (`python -m keras_bert3 pretrain ...`, the
# examples, the other backend's half of a comparison) are forked from a process
# that has done their imports, one per environment, instead of starting a new
# interpreter: tests/warm_commands.py. Measured on the 20 test files that start
# them (AMD EPYC Zen 4, both passes): 1,531 s of CPU (805 s wall) in new
# interpreters against 1,140 s (612 s). KERAS_BERT3_WARM_COMMANDS=0 starts each anew.
# JAX keeps XLA's compiled programs in a cache of the run's own, new each run
# (JAX's persistent compilation cache), shared by both passes: the test processes
# and the processes they start compile the same small models again and again, and
# a one-pass test that starts JAX processes may run in the TensorFlow pass. Measured on
# `bench/accelerator.py --tiny`: 51 s of CPU with an empty cache, 34 s with it filled.
# JAX keeps only programs that took a second or more to compile unless told
# otherwise (keras_bert3's own cache keeps every one, but a cache the user
# chose, as this one, keeps JAX's settings): here it keeps every one. Measured
# on the pretraining kill chain's ten JAX processes (AMD EPYC): 147 and 153 s
# of CPU keeping the slow ones, 124 and 124 s keeping every one.
jax_cache="$logs/jax-compilation-cache"
# A test of one of the one-pass markers (tests/conftest.py: its behaviour is the
# same under either backend) runs in one pass: the pass that reaches its file first
# claims the file's one-pass tests here, so that the passes end about together
# (`one_pass` tests run in the TensorFlow pass: tests/conftest.py's PINNED_PASS).
export KERAS_BERT3_ONE_PASS_CLAIMS="$logs/one-pass-claims"
mkdir "$KERAS_BERT3_ONE_PASS_CLAIMS"
start=$SECONDS
for backend in tensorflow jax; do
  (
    pass_start=$SECONDS
    env JAX_COMPILATION_CACHE_DIR="$jax_cache" JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0 KERAS_BACKEND=$backend "${pytest[@]}" -q -p no:cacheprovider --durations=50 "${selection[@]}" "$@" >"$logs/$backend.log" 2>&1
    echo $? >"$logs/$backend.status"
    echo "KERAS_BACKEND=$backend pass: $((SECONDS - pass_start)) s" >>"$logs/$backend.log"
  ) &
done
wait
status=0
for backend in tensorflow jax; do
  echo "=== KERAS_BACKEND=$backend ==="
  cat "$logs/$backend.log"
  [ "$(cat "$logs/$backend.status")" = 0 ] || status=1
done
echo "Both passes: $((SECONDS - start)) s"
if [ $measure_coverage = 1 ]; then
  python -m coverage combine --quiet && python -m coverage report --precision=1 --skip-covered --sort=cover
  python -m tests.coverage_summary
fi
if [ $measure_cpu_times = 1 ]; then
  python -m tests.cpu_times "$logs"
fi
rm -rf "$logs"
exit $status
