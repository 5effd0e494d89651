"""Where a GPU training step's time goes, from the files `bench/gpu_pretraining_step.py
--profile ROW` brings back: the JAX profiler's trace (`trace.xplane.pb.gz`) and
the step's optimized HLO (`train_step_hlo.txt.gz`).

Sums the GPU kernels of the traced steps by part of the step. A kernel XLA
generated carries its HLO instruction's name (`fusion.12` runs as `fusion_12`),
whose `op_name` metadata is the Keras layer path it came from; cuBLAS and
cuDNN kernels carry their library's names instead (`nvjet_*`, `cudnn_*`). Also
prints the kernels' share of the steps' wall time (the rest: the GPU idle
between kernels) and the most expensive kernels. Needs TensorFlow here (for
the XSpace protobuf); runs on any machine.

Command (from the repository root):

    python bench/gpu_step_profile.py DIR [--top 25]
"""

import argparse
import collections
import gzip
import os
import re

PARTS = [
    "matmuls: cuBLAS (encoder, MLM head, their gradients)",
    "matmuls: XLA/Triton",
    "attention: scores, softmax, probability dropout, context",
    "dropout (outputs, embeddings)",
    "LayerNorm",
    "GELU, residual, bias and other element-wise",
    "MLM head (gather, transform, loss)",
    "embedding + its gradient",
    "optimizer (AdamW, clipping)",
    "copies and other",
]


def part_of(kernel: str, rank: int, op_name: str) -> str:
    """The part of the step a kernel belongs to, from its name, the rank of its
    (first) output and its Keras layer path. Element-wise work directly under
    an encoder block is attention's when its output has 3 or more axes
    (`(batch, heads, queries, keys)` and its reductions); the block's other
    tensors are `(tokens, width)` rows."""
    name = op_name.lower()
    if re.match(r"nvjet|cutlass|sm\d+_xmma|.*gemm_kernel|cublas", kernel):
        return PARTS[0]
    if "cudnn" in kernel or "flash" in kernel or "fmha" in kernel:
        return PARTS[2]
    if re.search(r"adam|optimizer|clip|global_norm|assign|/update|variable", name):
        return PARTS[8]
    if "masked_lm_head" in name or re.search(r"log_softmax|cross_?entropy|logsumexp", name):
        return PARTS[6]
    if "embedding" in name:
        return PARTS[7]
    block = re.search(r"encoder_block_\d+/(.*)", name)
    if block and (block.group(1).startswith("probs_dropout") or ("/" not in block.group(1) and rank >= 3)):
        return PARTS[2]
    if kernel.startswith("gemm_fusion"):
        return PARTS[1]
    if "dropout" in name:
        return PARTS[3]
    if "layer_norm" in name:
        return PARTS[4]
    return PARTS[5] if block else PARTS[9]


def hlo_names(path: str) -> dict:
    """Kernel name (HLO instruction name, dots as underscores) -> (rank of
    its first output, op_name)."""
    pattern = re.compile(r"^\s*(?:ROOT )?%([\w.\-]+) = \(?\w+\[([\d,]*)\].*?op_name=\"([^\"]*)\"")
    names = {}
    with gzip.open(path, "rt") as file:
        for line in file:
            match = pattern.match(line)
            if match:
                instruction, dims, op_name = match.groups()
                rank = len(dims.split(",")) if dims else 0
                names.setdefault(instruction.replace(".", "_").replace("-", "_"), (rank, op_name))
    return names


def kernel_times(path: str):
    """(per kernel name: total ms, count), and the wall span of the trace in ms."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    with gzip.open(path, "rb") as file:
        space.ParseFromString(file.read())
    plane = next(p for p in space.planes if p.name.startswith("/device:GPU"))
    totals, counts, starts, ends = collections.Counter(), collections.Counter(), [], []
    for line in plane.lines:
        for event in line.events:
            name = plane.event_metadata[event.metadata_id].name
            totals[name] += event.duration_ps / 1e9
            counts[name] += 1
            starts.append(line.timestamp_ns * 1000 + event.offset_ps)
            ends.append(line.timestamp_ns * 1000 + event.offset_ps + event.duration_ps)
    return totals, counts, (max(ends) - min(starts)) / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="the --out folder of bench/gpu_pretraining_step.py")
    parser.add_argument("--steps", type=int, default=3, help="steps in the trace")
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    names = hlo_names(os.path.join(args.folder, "train_step_hlo.txt.gz"))
    totals, counts, span = kernel_times(os.path.join(args.folder, "trace.xplane.pb.gz"))
    by_part = collections.Counter()
    for kernel, ms in totals.items():
        rank, op_name = names.get(kernel, (0, ""))
        by_part[part_of(kernel, rank, op_name)] += ms
    busy = sum(by_part.values())
    print(
        f"{args.steps} steps: kernels {busy / args.steps:.1f} ms a step, trace span {span / args.steps:.1f} ms a step "
        f"(the GPU busy {busy / span:.0%} of it)\n"
    )
    print("| part of the step | ms a step | share of kernel time |")
    print("| --- | ---: | ---: |")
    for part in PARTS:
        print(f"| {part} | {by_part[part] / args.steps:.1f} | {by_part[part] / busy:.1%} |")
    print(f"\nThe {args.top} most expensive kernels (ms a step, launches a step, op):")
    for kernel, ms in totals.most_common(args.top):
        _, op_name = names.get(kernel, (0, ""))
        print(f"  {ms / args.steps:6.2f}  {counts[kernel] // args.steps:4d}  {kernel[:48]:48s} {op_name[-70:]}")


if __name__ == "__main__":
    main()
