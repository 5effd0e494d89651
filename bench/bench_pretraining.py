"""Pretraining throughput: keras_bert3 BertPretrainer vs keras-hub BertMaskedLM vs
Hugging Face BertForPreTraining, measured in one run on this machine.

Every implementation trains the same BERT (4 layers, 256 wide, 4 heads, FFN
1024, vocabulary 30,522; "mini" of Turc et al. 2019) on the same synthetic
batches (Zipf-distributed token ids, 90% full-length sequences, 15% of the
real tokens masked, at most 20 predictions, 80/10/10 replacement, random NSP
labels), with the same optimizer settings (AdamW, learning rate 1e-4 constant, weight
decay 0.01, epsilon 1e-6, global clipping at 1.0; keras_bert3 with `BertAdamW`,
the AdamW its `compile()` builds, keras-hub with `keras.optimizers.AdamW`,
Hugging Face with `torch.optim.AdamW`), dropout 0.1, for the same
number of steps. Each measurement runs in its own process (one Keras backend
per process, no shared thread pools) one after the other.

Printed:
- the measured matmul peak (2048x2048 float32 and bfloat16, TF graph, TF XLA, JAX);
- for each section (mini at sequence 128, mini at 512, base at 128), a table
  of tokens/s (the best of the rounds, and their spread), median step time,
  model FLOPs utilization (MFU against the float32 peak of the same
  framework, and the bfloat16 peak for bfloat16 rows), ratios to keras-hub's
  default row and to Hugging Face, and the MLM loss on a held-out batch after
  the same steps.

Each library runs first with its own defaults, as a user runs it (keras-hub
gets Keras' choice: no XLA for TensorFlow on a CPU; keras_bert3 gets
`compile(precision="auto")`, bfloat16 compute where the CPU has AVX512-BF16 or
AMX, and the table says what each row trained in); the mini-128 section adds
each library's other flags as extra rows (XLA or not, mixed_bfloat16). The
rounds alternate the rows (A B C A B C), so that a slow spell of the machine
does not fall on one row only.

Model FLOPs per step (PaLM, Chowdhery et al. 2022, appendix B, counting each
multiply-add as 2 and the backward pass as twice the forward):
    6 * tokens * N_encoder + 12 * layers * hidden * seq * tokens
    + 6 * batch * predictions * (hidden^2 + hidden * vocabulary)   # MLM head at the masked slots
    + 6 * batch * (hidden^2 + 2 * hidden)                          # pooler + NSP
where N_encoder = the weights of the encoder blocks' matmuls (12 * hidden^2
per block for FFN 4x). Embedding lookups and their gradient, LayerNorm,
softmax and the optimizer are not counted (they are real time but not
"model FLOPs"). The same count is used for all three implementations, so
Hugging Face, which computes the vocabulary logits at every position (20x the
MLM-head matmuls at seq 128), gets no credit for that extra work, and
keras-hub, which has no NSP head, gets credit for a few FLOPs it does not do.

Command (from the repository root; about 25 minutes on 2 cores):

    python bench/bench_pretraining.py

Options: `--steps` timed steps per measurement in the mini-128 section
(default 10, after 3 warm-up steps; the step time is the median), `--rounds`
(default 2), `--sections mini-128 mini-512 base-128`, `--skip-hf`, `--only
ours-tensorflow` (rows whose key starts so: `ours-jax`,
`keras_hub-tensorflow-xla`, `ours-tensorflow-graph-mixed_bfloat16`, ...). On a
shared machine other processes inflate step times: the load average is
printed beside each measurement, and before and after the run.
"""

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from bench.machine import describe_cpu  # noqa: E402
from bench.model_flops import pretraining_flops_per_step  # noqa: E402

VOCABULARY_SIZE = 30522
MAX_PREDICTIONS = 20
MASK_ID, CLS_ID, SEP_ID = 103, 101, 102
SIZES = {"tiny": (2, 128), "mini": (4, 256), "small": (4, 512), "base": (12, 768)}  # (layers, hidden)
EVAL_SEED = 12345


@dataclasses.dataclass(frozen=True)
class Config:
    """One measurement: which implementation, on which backend, at what shape."""

    implementation: str  # "ours", "keras_hub" or "hf"
    backend: str  # "tensorflow", "jax" or "torch"
    size: str = "mini"
    sequence_length: int = 128
    batch_size: int = 32
    # "auto": each library's default (ours: compile(precision="auto"), bfloat16 where native);
    # "float32": ours with compile(precision="float32"); "mixed_bfloat16": the global Keras policy.
    precision: str = "auto"
    warmup_steps: int = 3
    steps: int = 10
    # "auto": each library's default (Keras' for keras-hub: no XLA for TensorFlow on CPUs).
    jit_compile: str = "auto"

    @property
    def label(self) -> str:
        names = {
            "ours": "keras_bert3 BertPretrainer",
            "keras_hub": "keras-hub BertMaskedLM",
            "hf": "HF BertForPreTraining",
        }
        flags = []
        if self.jit_compile != "auto":
            flags.append("XLA" if self.jit_compile == "true" else "no XLA")
        if self.precision != "auto":
            flags.append(self.precision)
        settings = ", ".join(flags) if flags else "its defaults"
        return f"{names[self.implementation]} ({self.backend}, {settings})"


# ---------------------------------------------------------------------------
# Synthetic batches, the structure of `keras_bert3.data.pretraining_dataset`.
# ---------------------------------------------------------------------------


def make_batch(rng, batch_size: int, sequence_length: int):
    """One batch: x = token_ids, segment_ids, padding_mask, mask_positions;
    y = {"mlm": mask_ids, "nsp": labels}; sample_weight = {"mlm": mask_weights}."""
    # Zipf-like unigram distribution over the non-special ids, as real text.
    ranks = np.arange(1, VOCABULARY_SIZE - 999 + 1)
    probabilities = 1.0 / ranks
    probabilities /= probabilities.sum()
    tokens = rng.choice(np.arange(999, VOCABULARY_SIZE), size=(batch_size, sequence_length), p=probabilities)
    lengths = np.where(rng.random(batch_size) < 0.9, sequence_length, rng.integers(16, sequence_length, batch_size))
    token_ids = np.zeros((batch_size, sequence_length), "int32")
    segment_ids = np.zeros_like(token_ids)
    padding_mask = np.zeros_like(token_ids)
    mask_positions = np.zeros((batch_size, MAX_PREDICTIONS), "int32")
    mask_ids = np.zeros_like(mask_positions)
    mask_weights = np.zeros((batch_size, MAX_PREDICTIONS), "float32")
    for row, length in enumerate(lengths):
        split = rng.integers(2, length - 2)
        token_ids[row, :length] = tokens[row, :length]
        token_ids[row, [0, split, length - 1]] = [CLS_ID, SEP_ID, SEP_ID]
        segment_ids[row, split + 1 : length] = 1
        padding_mask[row, :length] = 1
        candidates = np.setdiff1d(np.arange(1, length - 1), [split])
        count = min(MAX_PREDICTIONS, max(1, int(round(length * 0.15))))
        positions = np.sort(rng.choice(candidates, count, replace=False))
        mask_positions[row, :count] = positions
        mask_ids[row, :count] = token_ids[row, positions]
        mask_weights[row, :count] = 1.0
        for position in positions:  # 80% [MASK], 10% random, 10% unchanged.
            draw = rng.random()
            if draw < 0.8:
                token_ids[row, position] = MASK_ID
            elif draw < 0.9:
                token_ids[row, position] = rng.integers(999, VOCABULARY_SIZE)
    nsp = rng.integers(0, 2, batch_size).astype("int32")
    x = {
        "token_ids": token_ids,
        "segment_ids": segment_ids,
        "padding_mask": padding_mask,
        "mask_positions": mask_positions,
    }
    return x, {"mlm": mask_ids, "nsp": nsp}, {"mlm": mask_weights}


def make_batches(config: Config, count: int = 4, seed: int = 0):
    rng = np.random.default_rng(seed)
    return [make_batch(rng, config.batch_size, config.sequence_length) for _ in range(count)]


def model_flops_per_step(config: Config) -> float:
    """PaLM-style model FLOPs of one training step (see the module docstring)."""
    layers, hidden = SIZES[config.size]
    return pretraining_flops_per_step(
        layers=layers,
        hidden=hidden,
        sequence_length=config.sequence_length,
        batch_size=config.batch_size,
        predictions=MAX_PREDICTIONS,
        vocabulary_size=VOCABULARY_SIZE,
    )


def weighted_mlm_loss(logits, mask_ids, mask_weights) -> float:
    """Weighted mean cross-entropy over the masked slots, in float64."""
    logits = np.asarray(logits, "float64")
    logits = logits - logits.max(-1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    picked = np.take_along_axis(log_probs, mask_ids[..., None].astype("int64"), axis=-1)[..., 0]
    return float(-(picked * mask_weights).sum() / mask_weights.sum())


# ---------------------------------------------------------------------------
# Workers: one implementation, timed in its own process.
# ---------------------------------------------------------------------------


def keras_optimizer(keras, implementation: str = "ours"):
    """AdamW with the benchmark's settings: for keras_bert3 the class its
    `compile()` builds (`BertAdamW`: PyTorch's epsilon, one fused kernel per
    variable on TensorFlow), for keras-hub Keras' own."""
    if implementation == "ours":
        from keras_bert3.optimizers import BertAdamW as optimizer_class
    else:
        optimizer_class = keras.optimizers.AdamW
    optimizer = optimizer_class(
        learning_rate=1e-4, weight_decay=0.01, beta_1=0.9, beta_2=0.999, epsilon=1e-6, global_clipnorm=1.0
    )
    optimizer.exclude_from_weight_decay(var_names=["gamma", "beta", "bias"])
    return optimizer


def run_keras(config: Config, batches, eval_batch):
    import keras

    if config.precision == "mixed_bfloat16":
        keras.config.set_dtype_policy(config.precision)
    keras.utils.set_random_seed(0)
    layers, hidden = SIZES[config.size]
    size_kwargs = dict(num_layers=layers, num_heads=hidden // 64, hidden_dim=hidden, intermediate_dim=4 * hidden)
    jit_compile = {"auto": "auto", "false": False, "true": True}[config.jit_compile]
    if config.implementation == "ours":
        import keras_bert3

        backbone = keras_bert3.BertBackbone(vocabulary_size=VOCABULARY_SIZE, max_sequence_length=512, **size_kwargs)
        model = keras_bert3.BertPretrainer(backbone)
        precision = {"float32": "float32"}.get(config.precision, "auto")
        model.compile(optimizer=keras_optimizer(keras), jit_compile=jit_compile, precision=precision)
        policy = model.training_dtype_policy
        data = batches
    else:
        import keras_hub

        backbone = keras_hub.models.BertBackbone(
            vocabulary_size=VOCABULARY_SIZE, max_sequence_length=512, dropout=0.1, **size_kwargs
        )
        model = keras_hub.models.BertMaskedLM(backbone, preprocessor=None)
        model.compile(
            optimizer=keras_optimizer(keras, "keras_hub"),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            weighted_metrics=[keras.metrics.SparseCategoricalAccuracy()],
            jit_compile=jit_compile,
        )
        data = [(x, y["mlm"], w["mlm"]) for x, y, w in batches]
        policy = keras.config.dtype_policy().name

    import tensorflow as tf

    def stack(parts):
        return tf.nest.map_structure(lambda *a: np.stack(a), *parts)

    total = config.warmup_steps + config.steps
    dataset = tf.data.Dataset.from_tensor_slices(stack(data)).repeat().take(total).prefetch(2)

    step_times = []

    class Timer(keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            self.start = time.perf_counter()

        def on_train_batch_end(self, batch, logs=None):
            step_times.append(time.perf_counter() - self.start)

    start = time.perf_counter()
    model.fit(dataset, epochs=1, steps_per_epoch=total, verbose=0, callbacks=[Timer()])
    wall = time.perf_counter() - start

    x_eval, y_eval, w_eval = eval_batch
    logits = model.predict_on_batch(x_eval)
    if isinstance(logits, dict):
        logits = logits["mlm"]
    loss = weighted_mlm_loss(keras.ops.convert_to_numpy(logits), y_eval["mlm"], w_eval["mlm"])
    return step_times, wall, loss, policy


def run_hf(config: Config, batches, eval_batch):
    import torch
    import transformers

    torch.manual_seed(0)
    torch.set_num_threads(os.cpu_count())
    layers, hidden = SIZES[config.size]
    hf_config = transformers.BertConfig(
        vocab_size=VOCABULARY_SIZE,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=hidden // 64,
        intermediate_size=4 * hidden,
        max_position_embeddings=512,
    )
    model = transformers.BertForPreTraining(hf_config).train()
    no_decay = [p for n, p in model.named_parameters() if "bias" in n or "LayerNorm" in n]
    decay = [p for n, p in model.named_parameters() if not ("bias" in n or "LayerNorm" in n)]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
        lr=1e-4,
        betas=(0.9, 0.999),
        eps=1e-6,
    )

    def to_torch(batch):
        x, y, w = batch
        labels = np.full(x["token_ids"].shape, -100, "int64")
        rows, slots = np.nonzero(w["mlm"])
        labels[rows, x["mask_positions"][rows, slots]] = y["mlm"][rows, slots]
        return dict(
            input_ids=torch.tensor(x["token_ids"], dtype=torch.long),
            token_type_ids=torch.tensor(x["segment_ids"], dtype=torch.long),
            attention_mask=torch.tensor(x["padding_mask"], dtype=torch.long),
            labels=torch.tensor(labels),
            next_sentence_label=torch.tensor(y["nsp"], dtype=torch.long),
        )

    step_times = []
    start_all = time.perf_counter()
    for step in range(config.warmup_steps + config.steps):
        start = time.perf_counter()
        inputs = to_torch(batches[step % len(batches)])
        loss = model(**inputs).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        step_times.append(time.perf_counter() - start)
    wall = time.perf_counter() - start_all

    x_eval, y_eval, w_eval = eval_batch
    model.eval()
    with torch.no_grad():
        logits = model(**to_torch(eval_batch)).prediction_logits.numpy()
    logits = np.take_along_axis(logits, x_eval["mask_positions"][:, :, None].astype("int64"), axis=1)
    return step_times, wall, weighted_mlm_loss(logits, y_eval["mlm"], w_eval["mlm"])


def worker(config: Config) -> dict:
    batches = make_batches(config)
    eval_batch = make_batches(config, count=1, seed=EVAL_SEED)[0]
    if config.implementation == "hf":
        step_times, wall, loss = run_hf(config, batches, eval_batch)
        policy = "float32"
    else:
        step_times, wall, loss, policy = run_keras(config, batches, eval_batch)
    timed = np.array(step_times[config.warmup_steps :])
    return {
        "config": dataclasses.asdict(config),
        "step_ms": float(np.median(timed) * 1e3),
        "step_ms_mean": float(timed.mean() * 1e3),
        "first_step_s": float(step_times[0]),
        "wall_s": wall,
        "mlm_loss": loss,
        "policy": policy,
    }


def matmul_peak(backend: str, n: int = 2048, repeats: int = 20) -> dict:
    """GFLOP/s of an n x n matmul in float32 and bfloat16."""

    def rate(fn, *args):
        for _ in range(3):
            result = fn(*args)
        sync(result)
        start = time.perf_counter()
        for _ in range(repeats):
            result = fn(*args)
        sync(result)
        return 2 * n**3 / ((time.perf_counter() - start) / repeats) / 1e9

    rates = {}
    if backend == "tensorflow":
        import tensorflow as tf

        sync = lambda r: r.numpy()  # noqa: E731
        for dtype in ("float32", "bfloat16"):
            a = tf.cast(tf.random.normal((n, n)), dtype)
            b = tf.cast(tf.random.normal((n, n)), dtype)
            rates[f"{dtype} graph"] = rate(tf.function(tf.matmul), a, b)
            rates[f"{dtype} XLA"] = rate(tf.function(tf.matmul, jit_compile=True), a, b)
    else:
        import jax
        import jax.numpy as jnp

        sync = lambda r: r.block_until_ready()  # noqa: E731
        for dtype in ("float32", "bfloat16"):
            a = jnp.asarray(np.random.randn(n, n), dtype)
            b = jnp.asarray(np.random.randn(n, n), dtype)
            rates[f"{dtype} XLA"] = rate(jax.jit(jnp.matmul), a, b)
            if dtype == "bfloat16":  # As keras_bert3's dense layers ask for it (ops/dense_product.py).
                product = jax.jit(lambda a, b: jnp.matmul(a, b, preferred_element_type=jnp.float32))
                rates["bfloat16 XLA, float32 result"] = rate(product, a, b)
    return rates


# ---------------------------------------------------------------------------
# Orchestration: each worker in a subprocess, then the tables.
# ---------------------------------------------------------------------------


def spawn(task: dict) -> dict:
    backend = task.get("backend") or task["config"]["backend"]
    env = dict(os.environ, KERAS_BACKEND=backend if backend != "torch" else "tensorflow")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    completed = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--worker", json.dumps(task)],
        env=env,
        capture_output=True,
        text=True,
    )
    lines = [line for line in completed.stdout.splitlines() if line.startswith("RESULT ")]
    if completed.returncode or not lines:
        sys.stderr.write(completed.stderr[-4000:])
        raise RuntimeError(f"worker {task} failed with exit code {completed.returncode}")
    return json.loads(lines[-1][len("RESULT ") :])


def measure(config: Config) -> dict:
    result = spawn({"config": dataclasses.asdict(config)})
    tokens = config.batch_size * config.sequence_length
    result["tokens_per_s"] = tokens / (result["step_ms"] / 1e3)
    result["gflops"] = model_flops_per_step(config) / (result["step_ms"] / 1e3) / 1e9
    print(
        f"  {config.label}, {config.size}, seq {config.sequence_length}: "
        f"{result['step_ms']:.0f} ms/step, {result['tokens_per_s']:,.0f} tokens/s, trained in {result['policy']}, "
        f"MLM loss {result['mlm_loss']:.4f} (compile+first step {result['first_step_s']:.1f} s, "
        f"load average {os.getloadavg()[0]:.1f})",
        flush=True,
    )
    return result


def peak_for(peaks: dict, config: Config, policy: str) -> float:
    framework = "jax" if config.backend == "jax" else "tensorflow"
    dtype = "bfloat16" if "bfloat16" in policy else "float32"
    if config.backend == "torch":
        return max(v for k, v in peaks["tensorflow"].items() if k.startswith(dtype))
    return max(v for k, v in peaks[framework].items() if k.startswith(dtype))


SECTIONS = {
    # name: (title, size, sequence length, batch size, warm-up steps, timed steps (None: --steps))
    "mini-128": ("mini (4 layers, 256 wide), sequence 128, batch 32", "mini", 128, 32, 3, None),
    "mini-512": ("mini, sequence 512, batch 32", "mini", 512, 32, 2, 4),
    "base-128": ("base (12 layers, 768 wide), sequence 128, batch 32", "base", 128, 32, 2, 2),
}


def section_rows(name: str, steps: dict, with_hf: bool, defaults_only: bool = False) -> list[Config]:
    """Each library's defaults first (what a user gets), then its best flags as extra rows."""
    _, size, length, batch, _, _ = SECTIONS[name]
    shape = dict(size=size, sequence_length=length, batch_size=batch, **steps)
    rows = [
        Config("ours", "tensorflow", **shape),
        Config("ours", "jax", **shape),
        Config("keras_hub", "tensorflow", **shape),
    ]
    if name != "mini-128" or defaults_only:
        return rows  # Defaults only: ratios at other shapes.
    rows += [
        Config("ours", "tensorflow", jit_compile="true", **shape),
        Config("ours", "tensorflow", precision="float32", **shape),
        Config("ours", "jax", precision="float32", **shape),
        Config("ours", "tensorflow", jit_compile="true", precision="mixed_bfloat16", **shape),
        Config("keras_hub", "tensorflow", jit_compile="true", **shape),
        Config("keras_hub", "tensorflow", precision="mixed_bfloat16", **shape),
    ]
    if with_hf:
        rows.append(Config("hf", "torch", **shape))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--steps", type=int, default=10, help="timed steps per measurement")
    parser.add_argument("--rounds", type=int, default=2, help="passes over the rows (A B A B); best and spread")
    parser.add_argument("--sections", nargs="+", default=list(SECTIONS), choices=list(SECTIONS))
    parser.add_argument("--skip-hf", action="store_true")
    parser.add_argument(
        "--only", help="rows whose key starts with this, e.g. ours-tensorflow, keras_hub-tensorflow-xla"
    )
    parser.add_argument(
        "--defaults-only", action="store_true", help="each library with its defaults, no extra-flag rows"
    )
    args = parser.parse_args()

    if args.worker:
        task = json.loads(args.worker)
        if "peak" in task:
            print("RESULT " + json.dumps(matmul_peak(task["backend"])), flush=True)
        else:
            print("RESULT " + json.dumps(worker(Config(**task["config"]))), flush=True)
        return

    print(f"CPU: {describe_cpu()}", flush=True)
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
    peaks = {backend: spawn({"peak": True, "backend": backend}) for backend in ("tensorflow", "jax")}
    print("Matmul peak, 2048x2048, GFLOP/s:")
    for backend, rates in peaks.items():
        print("  " + backend + ": " + ", ".join(f"{k} {v:.0f}" for k, v in rates.items()))

    for name in args.sections:
        title, size, _, _, warmup_steps, timed_steps = SECTIONS[name]
        steps = dict(steps=timed_steps or args.steps, warmup_steps=warmup_steps)
        rows = section_rows(name, steps, with_hf=not args.skip_hf, defaults_only=args.defaults_only)
        if args.only:
            rows = [r for r in rows if row_key(r).startswith(args.only)]
        print(f"\n{title}: {args.rounds} rounds over the rows, one process per measurement", flush=True)
        results = {row: [] for row in rows}
        for _ in range(args.rounds):
            for row in rows:
                results[row].append(measure(row))
        print_table(results, peaks, size)
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


def print_table(results: dict, peaks: dict, size: str) -> None:
    """Best tokens/s of the rounds, their spread, MFU and ratios to keras-hub's default row."""
    best = {row: max(runs, key=lambda r: r["tokens_per_s"]) for row, runs in results.items()}
    hub = next(
        (best[row] for row in best if row.implementation == "keras_hub" and row_key(row) == "keras_hub-tensorflow"),
        None,
    )
    hf = next((best[row] for row in best if row.implementation == "hf"), None)
    print()
    print(
        "| implementation | trained in | tokens/s (best) | spread | step ms | MFU | vs keras-hub default | vs HF | MLM loss after the steps |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row, result in best.items():
        rates = [r["tokens_per_s"] for r in results[row]]
        mfu = result["gflops"] / peak_for(peaks, row, result["policy"])
        vs_hub = f"{result['tokens_per_s'] / hub['tokens_per_s']:.2f}x" if hub else "-"
        vs_hf = f"{result['tokens_per_s'] / hf['tokens_per_s']:.2f}x" if hf else "-"
        print(
            f"| {row.label} | {result['policy']} | {result['tokens_per_s']:,.0f} | {min(rates):,.0f}-{max(rates):,.0f} | "
            f"{result['step_ms']:.0f} | {mfu:.0%} | {vs_hub} | {vs_hf} | {result['mlm_loss']:.3f} |"
        )
    flops = model_flops_per_step(next(iter(best)))
    print(
        f"\nModel FLOPs per step: {flops / 1e9:.1f} GFLOP ({size}). MFU against the float32 matmul peak of the "
        "same framework (TF's for PyTorch, both oneDNN); bfloat16 rows against the bfloat16 peak."
    )


def row_key(config: Config) -> str:
    """A short name for `--only`, e.g. ours-tensorflow-mixed_bfloat16 or keras_hub-tensorflow-xla."""
    parts = [config.implementation, config.backend]
    if config.jit_compile != "auto":
        parts.append("xla" if config.jit_compile == "true" else "graph")
    if config.precision != "auto":
        parts.append(config.precision)
    return "-".join(parts)


if __name__ == "__main__":
    main()
