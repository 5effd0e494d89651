#!/usr/bin/env bash
# The README's test command: installs keras_bert3 with its jax and test extras
# (torch CPU, transformers, the MiniLM checkpoint), then runs the whole suite on
# the TensorFlow backend and again on the JAX backend. Extra arguments go to
# pytest, e.g. `bash tests/run_all.sh -k tokenizer`.
set -uo pipefail
cd "$(dirname "$0")/.."
python -m pip install --quiet --disable-pip-version-check -e ".[jax,test]" || exit 1
# Parity tests must run, never skip, here: a missing reference is an error.
export KERAS_BERT3_REQUIRE_REFERENCE=1
status=0
for backend in tensorflow jax; do
  echo "=== KERAS_BACKEND=$backend ==="
  KERAS_BACKEND=$backend python -m pytest -q -p no:cacheprovider "$@" || status=1
done
exit $status
