"""`bench/accelerator.py --tiny` runs on this machine's CPU, so that the GPU
bench never rots: its rows of this backend complete, the pretraining loss
is finite, the exported fine-tuned classifier serves what `predict` gives, and a
float16 row on a CPU says which devices there are."""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest

from bench.accelerator import row_names

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLOAT16_ROW = "pretrain-tiny-64-mixed_float16"


class Args:
    rows, tiny, quick = None, True, False


@pytest.mark.backend_free
def test_float16_rows_are_offered_on_gpus_only():
    assert not any("mixed_float16" in name for name in row_names(Args, "cpu"))
    assert any("mixed_float16" in name for name in row_names(Args, "gpu"))


@pytest.mark.backend_free
def test_the_hugging_face_rows_import_neither_keras_nor_tensorflow():
    """`bench/accelerator_huggingface.py` takes its row settings from `bench/accelerator.py`: importing that
    module must not import Keras or TensorFlow, which a GPU machine for the comparison may not have."""
    loaded = subprocess.run(
        [sys.executable, "-c", "import json, sys; import bench.accelerator; print(json.dumps(sorted(sys.modules)))"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    modules = {name.split(".")[0] for name in json.loads(loaded.stdout)}
    assert not modules & {"keras", "tensorflow", "keras_bert3", "jax"}, modules & {"keras", "tensorflow", "jax"}


@pytest.mark.slow
@pytest.mark.skipif(
    keras.backend.backend() != "tensorflow",
    reason="the JAX rows (float32 on a CPU) run in test_quick_run_compares_with_hugging_face",
)
def test_tiny_run_completes_every_row(tmp_path):
    """The float32 fine-tuning row of TensorFlow, with its export and serving:
    the mixed_bfloat16 rows run the same code with another dtype (mixed
    precision training is tested in stop_on_nan_test, bfloat16 exports in
    text_classifier_export_test), the pretraining rows the same code on
    either backend (JAX's in the quick test below, which exports nothing:
    exports from JAX are tested in text_classifier_export_test)."""
    out = tmp_path / "results.json"
    rows = ["finetune-tiny-float32", FLOAT16_ROW]
    assert set(rows) <= set(row_names(Args, "cpu")) | {FLOAT16_ROW}
    completed = subprocess.run(
        [
            sys.executable,
            "bench/accelerator.py",
            "--tiny",
            "--backends",
            keras.backend.backend(),
            "--json",
            str(out),
            "--rows",
            *rows,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-3000:]
    with open(out, encoding="utf-8") as f:
        results = {result["row"]: result for result in json.load(f)}
    assert set(results) == set(rows)
    float16 = results.pop(FLOAT16_ROW)
    assert "needs a GPU" in float16["error"] and "cpu:0" in float16["error"]
    for result in results.values():
        assert "error" not in result, result
        assert result["sequences_per_s"] > 0 and result["peak_memory_gib"] > 0
    exported = results["finetune-tiny-float32"]
    assert exported["export_vs_predict_max_abs"] < 1e-5  # float32: the export computes what predict does.
    assert exported["serving_strings_per_s"] > 0
    assert "export + serving" in completed.stdout


@pytest.mark.slow
@pytest.mark.both_backends
def test_quick_run_compares_with_hugging_face(tmp_path):
    """`--quick` on this CPU with tiny rows: ours on JAX (the defaults), then
    Hugging Face's rows (`bench/accelerator_huggingface.py`) on the texts ours
    trained on; every row completes, and the fine-tuning rows report their
    first and steady epochs. About a minute: the whole `--quick` command,
    four processes, MiniLM fine-tuned in PyTorch among them."""
    out = tmp_path / "results.json"
    completed = subprocess.run(
        [sys.executable, "bench/accelerator.py", "--quick", "--tiny", "--json", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-3000:]
    with open(out, encoding="utf-8") as f:
        results = {result["row"]: result for result in json.load(f)}
    assert set(results) == {"finetune-tiny-auto", "pretrain-tiny-64-auto", "hf-finetune-minilm", "hf-pretrain-tiny-64"}
    for result in results.values():
        assert "error" not in result, result
        assert result["sequences_per_s"] > 0
    for row in ("finetune-tiny-auto", "hf-finetune-minilm"):
        assert 0 < results[row]["steady_epoch_s"] and 0 < results[row]["first_epoch_s"]
    assert results["finetune-tiny-auto"]["training_dtype_policy"] == "float32"  # Tasks on a CPU: float32.
    pretraining = results["pretrain-tiny-64-auto"]
    assert pretraining["backend"] == "jax" and pretraining["precision"] == "auto"
    assert np.isfinite([pretraining["loss_first_epoch"], pretraining["loss_last_epoch"]]).all()
    assert pretraining["input_examples_per_s"] > 0
    assert "Hugging Face (PyTorch on CPU" in completed.stdout
