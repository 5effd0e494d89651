"""Question answering served from raw strings, each server in its own
process: our SavedModel (`BertQuestionAnswerer.export`, loaded by a process
that imports only tensorflow and tensorflow_text), our ONNX export's
`text_model.onnx` (windows, model and span decoding in one graph; a process
that imports only onnxruntime and onnxruntime-extensions), float32 and int8,
against Hugging Face (PyTorch; transformers 4's question-answering pipeline
as `hugging_face_answerer`, transformers 5 having removed it), on the
same model: all-MiniLM-L6-v2 with a span head (seeded, untrained: the same
weights everywhere, so the answers can be compared), saved by `transformers`
and loaded by `BertQuestionAnswerer.from_preset`. Windows of 384 tokens with
a document stride of 128, questions cut to 64 tokens, answers of at most 15
tokens: the pipeline's defaults and ours.

    python bench/bench_serving_qa.py --rounds 3

Examples: "short", the embedded docstring questions' test set (one
sentence or two of context); "passages", a question on each topic of
Python's reference documentation (`pydoc_data.topics`), the first 2,000
characters of its text as the context (two windows or more). One example a
call: the median (p50) and 90th percentile over `--calls` calls after 10
warm-up calls. The rounds alternate the servers (A B C D A B C D); the table
gives each server's best round, the spread over rounds, the median over
rounds of its p50 against Hugging Face's in the same round, and how many of
its answers (start and end characters) equal Hugging Face's.
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
from bench.bench_serving import copy_minilm_tokenizer  # noqa: E402
from bench.bench_serving import load_average  # noqa: E402
from bench.bench_serving import minilm_dir  # noqa: E402
from bench.bench_serving import onnxruntime_session  # noqa: E402
from bench.machine import describe_cpu  # noqa: E402

WARMUP_CALLS = 10
SEQUENCE_LENGTH, DOC_STRIDE, MAX_ANSWER_LENGTH = 384, 128, 15  # The pipeline's defaults and ours.
ROWS = ("ours", "onnx-text", "onnx-text-int8", "hf")
EXPORTS = {"ours": {}, "onnx-text": {"format": "onnx"}, "onnx-text-int8": {"format": "onnx", "quantize": "int8"}}


def save_hf_question_answerer(directory: str) -> str:
    import torch
    import transformers

    torch.manual_seed(0)
    model = transformers.BertForQuestionAnswering.from_pretrained(minilm_dir())
    torch.nn.init.normal_(model.qa_outputs.weight, std=0.2)  # Distinct spans, not near-ties.
    model.save_pretrained(directory)
    copy_minilm_tokenizer(directory)
    return directory


def write_examples(path: str) -> dict:
    from pydoc_data import topics

    from keras_bert3_demo import docstring_questions

    test = docstring_questions()["test"]
    record = {
        "short": [list(pair) for pair in zip(test["question"], test["context"])],
        "passages": [[f"What does {key} do?", text[:2000]] for key, text in sorted(topics.topics.items())],
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(record, f)
    return record


def export_ours(hf_dir: str, export_dir: str, options: dict) -> None:
    """Exports in a child process (TensorFlow backend); `options` go to `export`."""
    code = (
        "import json, sys; from keras_bert3.models.bert_question_answerer import BertQuestionAnswerer; "
        "BertQuestionAnswerer.from_preset(sys.argv[1]).export(sys.argv[2], **json.loads(sys.argv[3]))"
    )
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    subprocess.run([sys.executable, "-c", code, hf_dir, export_dir, json.dumps(options)], env=env, check=True)


def answerer(kind: str, model_dir: str):
    """`answer(question, context) -> (start, end)` of one server kind."""
    if kind.startswith("onnx"):
        import onnxruntime_extensions

        assert not any(name.startswith(("keras_bert3", "tensorflow")) for name in sys.modules)
        path = os.path.join(model_dir, "text_model.onnx")
        session = onnxruntime_session(path, onnxruntime_extensions.get_library_path())

        def answer(question, context):
            feeds = {"question": np.array([question], dtype=object), "context": np.array([context], dtype=object)}
            start, end = session.run(["start", "end"], feeds)
            return int(start[0]), int(end[0])

    elif kind == "ours":
        import tensorflow as tf
        import tensorflow_text  # noqa: F401  (the tokenizer's ops)

        assert not any(name.startswith("keras_bert3") for name in sys.modules)
        signature = tf.saved_model.load(model_dir).signatures["serving_default"]

        def answer(question, context):
            outputs = signature(question=tf.constant([question]), context=tf.constant([context]))
            return int(outputs["start"][0]), int(outputs["end"][0])

    else:
        answer = hugging_face_answerer(model_dir)
    return answer


def hugging_face_answerer(model_dir: str):
    """`answer(question, context)` as transformers 4's question-answering
    pipeline (transformers 5 removed it but for its decoding functions):
    `BertTokenizerFast` windows (`return_overflowing_tokens`, the same
    stride), `BertForQuestionAnswering` on all windows of the example in one
    call, `select_starts_ends` per window, the answer widened to whole words,
    the best score over windows."""
    import torch
    import transformers
    from transformers.pipelines.document_question_answering import select_starts_ends

    tokenizer = transformers.BertTokenizerFast.from_pretrained(model_dir)
    model = transformers.BertForQuestionAnswering.from_pretrained(model_dir).eval()

    def answer(question, context):
        encoded = tokenizer(
            question,
            context,
            truncation="only_second",
            max_length=SEQUENCE_LENGTH,
            stride=DOC_STRIDE,
            return_overflowing_tokens=True,
            return_offsets_mapping=True,
            padding="longest",
        )
        inputs = {key: torch.tensor(encoded[key]) for key in ("input_ids", "token_type_ids", "attention_mask")}
        with torch.no_grad():
            output = model(**inputs)
        best = (-1.0, 0, 0)
        for window in range(len(encoded["input_ids"])):
            p_mask = np.array([[int(s != 1) for s in encoded.sequence_ids(window)]])
            p_mask[0, 0] = 0  # [CLS]
            start, end = (logits[window : window + 1].numpy() for logits in (output.start_logits, output.end_logits))
            attention = np.array([encoded["attention_mask"][window]])
            starts, ends, scores, _ = select_starts_ends(
                start, end, p_mask, attention, max_answer_len=MAX_ANSWER_LENGTH
            )
            encoding = encoded.encodings[window]
            for s, e, score in zip(starts, ends, scores):
                if score > best[0]:
                    first = encoding.word_to_chars(encoding.token_to_word(s), sequence_index=1)[0]
                    last = encoding.word_to_chars(encoding.token_to_word(e), sequence_index=1)[1]
                    best = (float(score), first, last)
        return best[1], best[2]

    return answer


def serve(kind: str, model_dir: str, examples_file: str, calls: int) -> dict:
    with open(examples_file, encoding="utf-8") as f:
        examples = json.load(f)
    answer = answerer(kind, model_dir)
    result = {}
    for name, pairs in examples.items():
        for i in range(WARMUP_CALLS):
            answer(*pairs[i % len(pairs)])
        times = []
        for i in range(calls):
            start = time.perf_counter()
            answer(*pairs[i % len(pairs)])
            times.append(time.perf_counter() - start)
        result[f"{name}_p50_ms"] = 1000 * float(np.percentile(times, 50))
        result[f"{name}_p90_ms"] = 1000 * float(np.percentile(times, 90))
        result[f"{name}_spans"] = [answer(*pair) for pair in pairs]
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--rows", nargs="+", default=list(ROWS), choices=ROWS)
    parser.add_argument("--workdir", help="Keep the model, exports and examples here (default: a temporary directory).")
    parser.add_argument("--serve", nargs=3, metavar=("KIND", "MODEL_DIR", "EXAMPLES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        print("RESULT " + json.dumps(serve(*args.serve, args.calls)))
        return

    workdir = args.workdir or tempfile.mkdtemp(prefix="bench_serving_qa_")
    os.makedirs(workdir, exist_ok=True)
    examples_file = os.path.join(workdir, "examples.json")
    examples = write_examples(examples_file)
    hf_dir = os.path.join(workdir, "hf")
    if not os.path.isdir(hf_dir):
        save_hf_question_answerer(hf_dir)
    models = {"hf": hf_dir}
    for row, options in EXPORTS.items():
        models[row] = os.path.join(workdir, row)
        if row in args.rows and not os.path.isdir(models[row]):
            export_ours(hf_dir, models[row], options)

    print(f"CPU: {describe_cpu()}", flush=True)
    print(f"load average before: {load_average()}", flush=True)
    results = {row: [] for row in args.rows}
    for round_index in range(args.rounds):
        for row in args.rows:
            env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
            env.pop("PYTHONPATH", None)  # Servers import no keras_bert3.
            command = [sys.executable, os.path.abspath(__file__), "--calls", str(args.calls), "--serve", row]
            out = subprocess.run(command + [models[row], examples_file], env=env, capture_output=True, text=True)
            if out.returncode != 0:
                raise SystemExit(f"{row} failed:\n{out.stderr[-3000:]}")
            results[row].append(json.loads(out.stdout.split("RESULT ", 1)[1]))
            summary = {key: value for key, value in results[row][-1].items() if not key.endswith("_spans")}
            print(f"round {round_index + 1} {row}: {summary}", flush=True)
    print(f"load average after: {load_average()}")
    print_table(results, examples, args.rounds)


def print_table(results: dict, examples: dict, rounds: int) -> None:
    print(
        f"\nBest round (spread over {rounds} rounds); examples: "
        + ", ".join(f"{len(v)} {k}" for k, v in examples.items())
    )
    names = list(examples)
    header = " | ".join(f"{name} p50 ms | p90 | vs HF's p50, same round | spans as HF's" for name in names)
    print(f"\n| served by | {header} |")
    print("| --- |" + " ---: | ---: | ---: | ---: |" * len(names))
    for row, runs in results.items():
        cells = []
        for name in names:
            p50s = [run[f"{name}_p50_ms"] for run in runs]
            p90 = min(run[f"{name}_p90_ms"] for run in runs)
            cells += [f"{min(p50s):.1f} ({min(p50s):.1f}-{max(p50s):.1f})", f"{p90:.1f}"]
            if "hf" in results:
                paired = [ours / theirs for ours, theirs in zip(p50s, (r[f"{name}_p50_ms"] for r in results["hf"]))]
                cells.append(f"{np.median(paired):.2f}x ({min(paired):.2f}-{max(paired):.2f})")
                same = sum(
                    tuple(a) == tuple(b) for a, b in zip(runs[0][f"{name}_spans"], results["hf"][0][f"{name}_spans"])
                )
                cells.append(f"{same}/{len(examples[name])}")
            else:
                cells += ["", ""]
        print(f"| {row} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
