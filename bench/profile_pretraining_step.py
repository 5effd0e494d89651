"""Where a BertPretrainer training step's time goes, from the backend's profiler.

Trains the benchmark's model (4 layers, 256 wide, seq 128 or 512, batch 32, the
synthetic batches of `bench_pretraining.py`) for a few steps under
`jax.profiler` or `tf.profiler`, reads the trace (an XSpace protobuf), and
sums the time of every executed op into: encoder matmuls, attention (scores,
softmax, mask, probability dropout, weighted sum), MLM head (gather, dense,
vocabulary projection and its gradient), loss, embedding (lookup and
gradient), LayerNorm/GELU/dropout/residual element-wise work, optimizer
(AdamW, clipping), and the rest. Under XLA an op is an HLO instruction
(often a fusion); its category comes from the `op_name` metadata XLA keeps
(the Keras layer path), read from an HLO dump. CPU time of both worker
threads is summed, then scaled to the measured step time. The input pipeline
is timed separately (a `tf.data` pass over the same batches).

Commands (from the repository root):

    KERAS_BACKEND=jax python bench/profile_pretraining_step.py
    KERAS_BACKEND=tensorflow python bench/profile_pretraining_step.py [--no-xla] [--precision mixed_bfloat16]
"""

import argparse
import collections
import glob
import os
import re
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

CATEGORIES = [
    "encoder matmuls",
    "attention",
    "MLM head",
    "loss",
    "embedding + its gradient",
    "LayerNorm, GELU, dropout, residual",
    "optimizer",
    "other",
]


def categorize(op_name: str, opcode: str = "") -> str:
    """A category from an op's layer path (TF op name or XLA op_name metadata)."""
    name = op_name.lower()
    if re.search(r"adam|optimizer|clip|global_norm|assign|/update|variable", name):
        return "optimizer"
    if "masked_lm_head" in name:
        return "MLM head"
    if "embedding" in name or opcode == "scatter" or "unsortedsegmentsum" in name:
        return "embedding + its gradient"
    if "encoder_block" in name:
        if re.search(r"bqhd|bhqk|softmax|where|select|reduce_max|exp|dot_product_attention|einsum|batchmatmul", name):
            return "attention"
        if "probs_dropout" in name:
            return "attention"
        if re.search(r"/(qkv|attention_output|intermediate|output)(_\d+)?/(\S*/)?(dot_general|matmul)", name):
            return "encoder matmuls"
        return "LayerNorm, GELU, dropout, residual"
    if "pooler" in name or "next_sentence" in name:
        return "encoder matmuls"
    if re.search(r"log_softmax|cross_?entropy|sparse|loss|logsumexp|argmax|mean", name):
        return "loss"
    return "other"


def hlo_op_names(dump_dir: str) -> dict:
    """Maps HLO instruction names to (opcode, op_name) for every module in a dump."""
    names = {}
    pattern = re.compile(r"^\s*(?:ROOT )?%?([\w.\-]+) = [^ ]+ ([\w\-]+)\(.*?op_name=\"([^\"]*)\"")
    for path in glob.glob(os.path.join(dump_dir, "*after_optimizations.txt")):
        with open(path) as file:
            for line in file:
                match = pattern.match(line)
                if match:
                    instruction, opcode, op_name = match.groups()
                    names.setdefault(instruction, (opcode, op_name))
    return names


def op_times(trace_dir: str) -> collections.Counter:
    """Sums event durations (ms) by event name over the host's op threads."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    totals = collections.Counter()
    for path in glob.glob(os.path.join(trace_dir, "**", "*.xplane.pb"), recursive=True):
        space = xplane_pb2.XSpace()
        with open(path, "rb") as file:
            space.ParseFromString(file.read())
        for plane in space.planes:
            if plane.name != "/host:CPU":
                continue
            for line in plane.lines:
                if line.name == "python" or "PjRtCpuClient" in line.name:
                    continue  # Python frames and the dispatch thread's waiting.
                for event in line.events:
                    name = plane.event_metadata[event.metadata_id].name
                    if "ThunkExecutor" in name or name.startswith("$") or name.startswith("end:"):
                        continue
                    totals[name] += event.duration_ps / 1e9
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--no-xla", action="store_true", help="TensorFlow graph mode (oneDNN kernels)")
    parser.add_argument("--precision", default="auto", help="auto (the default), float32 or mixed_bfloat16")
    parser.add_argument("--top", type=int, default=0, help="also print the N most expensive ops")
    parser.add_argument("--sequence-length", type=int, default=128, help="128 or 512 (the benchmark's sections)")
    args = parser.parse_args()

    dump_dir = tempfile.mkdtemp(prefix="hlo_dump_")
    os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + f" --xla_dump_to={dump_dir} --xla_dump_hlo_as_text"
    import keras
    import numpy as np
    import tensorflow as tf

    import bench_pretraining as bench
    import keras_bert3

    backend = keras.backend.backend()
    if args.precision not in ("auto", "float32"):
        keras.config.set_dtype_policy(args.precision)
    config = bench.Config("ours", backend, sequence_length=args.sequence_length)
    batches = bench.make_batches(config)
    backbone = keras_bert3.BertBackbone(
        vocabulary_size=bench.VOCABULARY_SIZE, num_layers=4, num_heads=4, hidden_dim=256, intermediate_dim=1024
    )
    model = keras_bert3.BertPretrainer(backbone)
    model.compile(
        optimizer=bench.keras_optimizer(keras, "ours"),
        jit_compile=False if args.no_xla else "auto",
        precision="float32" if args.precision == "float32" else "auto",
    )

    # Input pipeline: the same tf.data path `fit` uses, without the model.
    def stack(parts):
        return tf.nest.map_structure(lambda *a: np.stack(a), *parts)

    dataset = tf.data.Dataset.from_tensor_slices(stack(batches)).repeat()
    start = time.perf_counter()
    for _, element in zip(range(50), dataset):
        if backend == "jax":
            tf.nest.map_structure(lambda t: t.numpy(), element)
    input_ms = (time.perf_counter() - start) / 50 * 1e3

    def run(steps):
        for step in range(steps):
            logs = model.train_on_batch(*batches[step % len(batches)], return_dict=True)
        return logs

    run(3)  # Compile and warm up.
    start = time.perf_counter()
    run(args.steps)
    step_ms = (time.perf_counter() - start) / args.steps * 1e3

    trace_dir = tempfile.mkdtemp(prefix="trace_")
    if backend == "jax":
        import jax

        jax.profiler.start_trace(trace_dir)
        run(args.steps)
        jax.profiler.stop_trace()
    else:
        tf.profiler.experimental.start(trace_dir)
        run(args.steps)
        tf.profiler.experimental.stop()

    names = hlo_op_names(dump_dir)
    by_category = collections.Counter()
    by_op = collections.Counter()
    for event, ms in op_times(trace_dir).items():
        opcode, op_name = names.get(event, ("", event))
        by_category[categorize(op_name, opcode)] += ms
        by_op[(event, op_name[:110])] += ms
    total = sum(by_category.values())
    mode = "graph (oneDNN)" if backend == "tensorflow" and args.no_xla else "XLA"
    print(
        f"\n{backend}, {mode}, {model.training_dtype_policy}: {step_ms:.0f} ms per step (train_on_batch); "
        f"profiled op time {total / args.steps:.0f} ms CPU per step over both threads"
    )
    print("| part of the step | share | ms per step |")
    print("| --- | ---: | ---: |")
    for category in CATEGORIES:
        share = by_category[category] / total
        print(f"| {category} | {share:.0%} | {share * step_ms:.0f} |")
    print(f"| input pipeline (tf.data, separately, overlapped by prefetch in fit) | - | {input_ms:.1f} |")
    for (event, op_name), ms in by_op.most_common(args.top):
        print(f"  {ms / args.steps:7.1f} ms  {event:30s} {op_name}")


if __name__ == "__main__":
    main()
