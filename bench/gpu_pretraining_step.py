"""BertPretrainer's training step on one GPU (JAX): a profile, the fused-attention
and packed-row options, and Hugging Face's compiled step on the same batches.

Two halves, because the GPU machines have JAX, PyTorch and transformers but no
TensorFlow (so no tf.data, no tokenizer there):

- `--prepare DIR` (here, with TensorFlow): real batches of the embedded corpus
  with the uncased BERT vocabulary (30,522) from `pretraining_dataset`, saved
  as `.npz`: length 128 (batch 128 and 256), pairs of at most 512 unpacked
  (batch 32) and the same stream packed into rows of 512 (batch 32, with
  their `pair_ids`: files prepared before that input must be prepared again).
- `--run DIR` (on the GPU): each row in its own process, one after the other,
  while `--budget` seconds are left; each prints a `RESULT {json}` line and
  appends it to `--out`/results.jsonl. Our rows import only the model
  modules, which need no TensorFlow on JAX (the package's `__init__`, which
  loads the tokenizers and the data pipeline, is skipped where TensorFlow is
  missing).

Rows:
- `ours-{size}-{length}-{variant}[-b{batch}]`: `BertPretrainer.fit` with
  `compile()`'s defaults (the BERT recipe; mixed_bfloat16 on the GPU).
  Variants: `default` (the library as a user gets it: dropout 0.1 everywhere;
  on a GPU the attention is cuDNN's fused kernel with the probabilities'
  dropout inside it, on query, key and value from three products);
  `unfused` (the same recipe through the encoder block's own attention ops:
  the path before the fused kernel took dropout, for the A/B); `nodrop`
  (`attention_dropout=0`); `fusedln` (the default with dropout, residual and
  LayerNorm in one Pallas kernel each way: `ops.dropout_add_layer_norm`, off
  in the library until measured); `packed` / `packed-nodrop` (length 512 only:
  `BertPretrainer(packed=True)` on the packed rows). `-b256` picks another
  prepared batch size. `--profile ROW` also traces three steps of that row
  with the JAX profiler and dumps its optimized HLO, both written to `--out`
  for `bench/gpu_step_profile.py`.
- `hf-{size}-{length}[-b{batch}]`: Hugging Face `BertForPreTraining` (SDPA
  attention) under `torch.compile`, bfloat16 autocast, fused AdamW (lr 1e-4,
  weight decay 0.01), on the same unpacked batches (its MLM labels at the
  same masked positions).
- `check-fused`: the fused attention against `attention_reference` on the
  GPU in bfloat16 (values and gradients, relative error), with padding and
  with packed masks; then its dropout: whether the mask changes from one
  execution of a compiled step to the next, whether the backward pass uses
  the forward pass's mask, and the share of probabilities dropped; then the
  fused dropout-residual-LayerNorm kernels against the unfused ops (float32)
  and both timed alone (bfloat16).

`--quick` runs the rows that answer issue 65 in about 8 minutes of GPU time:
the check, then BERT-large and BERT-base at 128 against Hugging Face, the
recipe's previous path, batch 256 and packed rows of 512.

Every row reports sequences/s (best timed epoch; the worst beside it), real
(non-padding) tokens/s, MFU over the datasheet bfloat16 peak counting the
padded rows' model FLOPs and counting real tokens only, and peak memory.

Commands (from the repository root):

    python bench/gpu_pretraining_step.py --prepare bench_batches
    python bench/gpu_pretraining_step.py --run bench_batches --out out --quick
    python bench/gpu_pretraining_step.py --run bench_batches --out out --rows check-fused ours-large-128-default hf-large-128 --profile ours-large-128-default
"""

import argparse
import json
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from bench.accelerator_huggingface import SIZES  # noqa: E402  (layers, hidden, heads; no Keras, no PyTorch import)
from bench.accelerator_huggingface import pretraining_config  # noqa: E402

VOCABULARY_SIZE = 30522
PEAK_BF16_TFLOPS = {"H100": 989.4, "H200": 989.4}  # Dense datasheet peaks.
# (length, batch) -> file; `packed` holds the 512 stream packed into rows of 512.
BATCH_FILES = {
    (128, 128): "len128_batch128",
    (128, 256): "len128_batch256",
    (512, 32): "len512_batch32",
    ("packed", 32): "packed512_batch32",
}
PREDICTIONS = {128: 20, 512: 80}
QUICK_ROWS = [
    "check-fused",
    "ours-large-128-default",
    "hf-large-128",
    "ours-large-128-fusedln",
    "ours-base-128-default",
    "hf-base-128",
    "ours-base-128-fusedln",
    "ours-large-128-unfused",
    "ours-large-128-default-b256",
    "ours-large-512-packed",
    "hf-large-128-b256",
    "ours-large-128-nodrop",
]


def parse_row(row: str, args) -> dict:
    """`ours-large-128-default-b256` -> its parts; the batch size from the
    row, `--batch`, or the default for its length and size."""
    parts = row.split("-")
    batch = int(parts.pop()[1:]) if parts[-1].startswith("b") and parts[-1][1:].isdigit() else args.batch
    library, size, length, variant = parts[0], parts[1], int(parts[2]), "-".join(parts[3:]) or "default"
    if batch is None:
        batch = 32 if length == 512 else 128 if size == "large" else 256
    return {
        "library": library,
        "size": size,
        "length": length,
        "variant": variant,
        "packed": variant.startswith("packed"),
        "batch": batch,
    }


# === Preparing the batches (with TensorFlow) ===


def prepare(folder: str, batches: int) -> None:
    """Writes `batches` batches of each kind in BATCH_FILES to `folder`."""
    import numpy as np

    from bench.accelerator import minilm_dir
    from keras_bert3.data.batching_config import BatchingConfig
    from keras_bert3.data.masking_config import MaskingConfig
    from keras_bert3.data.pairing_config import PairingConfig
    from keras_bert3.data.pretraining_dataset import pretraining_dataset
    from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
    from keras_bert3_demo.default_corpus import default_corpus_path

    os.makedirs(folder, exist_ok=True)
    tokenizer = BertTokenizer.from_preset(minilm_dir())
    for (length, batch_size), name in BATCH_FILES.items():
        packed = length == "packed"
        sequence_length = 512 if packed else length
        dataset = pretraining_dataset(
            default_corpus_path(),
            tokenizer,
            PairingConfig(sequence_length=sequence_length),
            MaskingConfig(max_predictions_per_seq=PREDICTIONS[sequence_length]),
            BatchingConfig(batch_size=batch_size, packed_length=512 if packed else None, drop_remainder=True),
        )
        arrays = {}
        for i, (x, y, weights) in zip(range(batches), dataset):
            for prefix, part in (("x", x), ("y", y), ("w", weights)):
                for key, value in part.items():
                    arrays.setdefault(f"{prefix}.{key}", []).append(value.numpy())
        np.savez_compressed(os.path.join(folder, name + ".npz"), **{k: np.stack(v) for k, v in arrays.items()})
        print(f"{name}: {len(arrays['x.token_ids'])} batches, {sorted(arrays)}")


def load_batches(folder: str, name: str) -> list:
    """The `(x, y, sample_weight)` batches of one file, as numpy dicts."""
    import numpy as np

    with np.load(os.path.join(folder, name + ".npz")) as data:
        arrays = {key: data[key] for key in data.files}
    count = len(arrays["x.token_ids"])
    parts = lambda prefix, i: {k.split(".", 1)[1]: v[i] for k, v in arrays.items() if k.startswith(prefix + ".")}
    return [(parts("x", i), parts("y", i), parts("w", i)) for i in range(count)]


# === Counting ===


def pair_lengths(x: dict, packed: bool) -> list:
    """The real length of every pair in a batch."""
    import numpy as np

    if not packed:
        return [int(n) for n in np.asarray(x["padding_mask"]).sum(axis=1)]
    pair_ids = np.asarray(x["pair_ids"])  # 1, 2, ... for a row's pairs; 0 for padding.
    return [int((row == pair).sum()) for row in pair_ids for pair in range(1, int(row.max()) + 1)]


def real_flops(layers: int, hidden: int, lengths: list, predictions: int) -> float:
    """Model FLOPs of a step that computed only the real tokens, each pair
    attending within itself (`bench/model_flops.py`'s terms, per pair)."""
    flops = sum(6 * n * layers * 12 * hidden * hidden + 12 * layers * hidden * n * n for n in lengths)
    flops += 6 * predictions * (hidden * hidden + hidden * VOCABULARY_SIZE)
    return flops + 6 * len(lengths) * (hidden * hidden + 2 * hidden)


def padded_flops(layers: int, hidden: int, length: int, batch_size: int, predictions: int) -> float:
    from bench.model_flops import pretraining_flops_per_step

    return pretraining_flops_per_step(
        layers=layers,
        hidden=hidden,
        sequence_length=length,
        batch_size=batch_size,
        predictions=predictions,
        vocabulary_size=VOCABULARY_SIZE,
    )


def rates(seconds: list, steps: int, batches: list, packed: bool, layers: int, hidden: int, device: str) -> dict:
    """Sequences/s, real tokens/s and MFU (padded and real) of timed epochs
    of `steps` steps over `batches` in turn."""
    import numpy as np

    used = [batches[i % len(batches)] for i in range(steps)]
    rows, length = used[0][0]["token_ids"].shape
    real_tokens = sum(sum(pair_lengths(x, packed)) for x, _, _ in used)
    predictions = sum(float(np.sum(w["mlm"])) for _, _, w in used)
    per_row_predictions = used[0][0]["mask_positions"].shape[1]
    flops_real = sum(real_flops(layers, hidden, pair_lengths(x, packed), 0) for x, _, _ in used)
    flops_real += 6 * predictions * (hidden * hidden + hidden * VOCABULARY_SIZE)
    flops_padded = steps * padded_flops(layers, hidden, length, rows, per_row_predictions)
    best, worst = min(seconds), max(seconds)
    peak = next((v for k, v in PEAK_BF16_TFLOPS.items() if k in device), None)
    result = {
        "sequences_per_s": rows * steps / best,
        "sequences_per_s_worst": rows * steps / worst,
        "real_tokens_per_s": real_tokens / best,
        "real_token_share": real_tokens / (rows * length * steps),
        "pairs_per_s": sum(len(pair_lengths(x, packed)) for x, _, _ in used) / best,
        "epoch_s": seconds,
    }
    if peak:
        result["mfu_padded"] = flops_padded / best / 1e12 / peak
        result["mfu_real"] = flops_real / best / 1e12 / peak
    return result


# === Our rows (JAX) ===


def import_models_without_tensorflow() -> None:
    """Where TensorFlow is missing, registers `keras_bert3` and
    `keras_bert3.data` as bare packages, so that importing the model modules
    skips the package `__init__`s (tokenizers and data pipeline: TensorFlow)."""
    import importlib.util
    import types

    try:
        if importlib.util.find_spec("tensorflow") is not None:
            return
    except ImportError:
        pass
    for name in ("keras_bert3", "keras_bert3.data"):
        package = types.ModuleType(name)
        package.__path__ = [os.path.join(REPO, *name.split("."))]
        sys.modules[name] = package


def run_ours(row: str, args) -> dict:
    os.environ["KERAS_BACKEND"] = "jax"
    profiling = row == args.profile
    if profiling:
        dump = os.path.join(args.out, "hlo_dump")
        os.environ["XLA_FLAGS"] = (
            os.environ.get("XLA_FLAGS", "")
            + f" --xla_dump_to={dump} --xla_dump_hlo_as_text --xla_dump_hlo_module_re=.*train_step.*"
        )
    import_models_without_tensorflow()
    from keras_bert3.upstream.cudnn_attention_dropout import leave_cudnn_out_of_command_buffers

    leave_cudnn_out_of_command_buffers()  # As `keras-bert3` commands do: dropout inside cuDNN's attention.
    import jax
    import keras

    from keras_bert3.models.bert_backbone import BertBackbone
    from keras_bert3.models.bert_pretrainer import BertPretrainer

    spec = parse_row(row, args)
    size, length, variant, packed, batch_size = (spec[k] for k in ("size", "length", "variant", "packed", "batch"))
    layers, hidden, _ = SIZES[size]
    batches = load_batches(args.run, BATCH_FILES[("packed" if packed else length, batch_size)])
    if variant == "unfused":  # The recipe through the block's own attention ops (the A/B's other side).
        from keras_bert3.layers.bert_encoder_block import BertEncoderBlock

        BertEncoderBlock._fused_attention_runs = lambda self: False
    if variant == "fusedln":
        from keras_bert3.ops.dropout_add_layer_norm import enable_fused_dropout_add_layer_norm

        enable_fused_dropout_add_layer_norm()
    keras.utils.set_random_seed(0)
    backbone = BertBackbone.from_size(
        size,
        vocabulary_size=VOCABULARY_SIZE,
        max_sequence_length=512,
        attention_dropout=0.0 if variant.endswith("nodrop") else None,
    )
    pretrainer = BertPretrainer(backbone, packed=packed)
    epochs = 1 + args.timed_epochs
    pretrainer.compile(learning_rate=1e-4, total_steps=(epochs + 1) * args.steps, warmup_steps=args.steps)

    def stream():
        i = 0
        while True:
            yield batches[i % len(batches)]
            i += 1

    class Timer(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.start = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):  # Keras reads the logs back: the step is done.
            seconds.append(time.perf_counter() - self.start)
            losses.append(float(logs["loss"]))
            log(f"{row}: epoch {epoch} {seconds[-1]:.2f} s, loss {losses[-1]:.3f}")

    seconds, losses = [], []
    pretrainer.fit(stream(), epochs=epochs, steps_per_epoch=args.steps, callbacks=[Timer()], verbose=0)
    device = jax.devices()[0].device_kind
    result = rates(seconds[1:], args.steps, batches, packed, layers, hidden, device)
    from keras_bert3.ops.fused_attention import fused_attention_available

    block, step_dtype = (
        backbone.encoder_blocks[0],
        keras.dtype_policies.get(pretrainer.training_dtype_policy).compute_dtype,
    )
    result.update(
        device=device,
        first_epoch_s=seconds[0],
        loss_first=losses[0],
        loss_last=losses[-1],
        fused_attention=variant != "unfused"
        and fused_attention_available(block.attention_dropout, step_dtype, block.head_dim),
        policy=pretrainer.training_dtype_policy,
        batch_size=batch_size,
        versions={"jax": jax.__version__, "keras": keras.__version__},
        peak_memory_gib=(jax.local_devices()[0].memory_stats() or {}).get("peak_bytes_in_use", 0) / 2**30,
    )
    if profiling:
        trace = os.path.join(args.out, "trace")
        jax.profiler.start_trace(trace)
        pretrainer.fit(stream(), epochs=1, steps_per_epoch=3, verbose=0)
        jax.profiler.stop_trace()
        result["profile_steps"] = 3
        keep_profile(args.out, dump, trace)
    return result


def keep_profile(out: str, dump: str, trace: str) -> None:
    """The train step's optimized HLO and the trace, gzipped into `out` (the
    dump's other files and folders removed: few files come back from a GPU run)."""
    import glob
    import gzip
    import shutil

    kept = {
        "train_step_hlo.txt.gz": max(
            glob.glob(os.path.join(dump, "*train_step*after_optimizations.txt")), key=os.path.getsize
        ),
        "trace.xplane.pb.gz": glob.glob(os.path.join(trace, "**", "*.xplane.pb"), recursive=True)[0],
    }
    for name, path in kept.items():
        with open(path, "rb") as source, gzip.open(os.path.join(out, name), "wb") as target:
            shutil.copyfileobj(source, target)
    shutil.rmtree(dump)
    shutil.rmtree(trace)


def run_check_fused(args) -> dict:
    """The fused attention against the reference on this GPU, bfloat16."""
    os.environ["KERAS_BACKEND"] = "jax"
    import_models_without_tensorflow()
    from keras_bert3.upstream.cudnn_attention_dropout import leave_cudnn_out_of_command_buffers

    leave_cudnn_out_of_command_buffers()
    import jax
    import jax.numpy as jnp
    import numpy as np

    from keras_bert3.layers.packed_sequences import packed_attention_mask
    from keras_bert3.ops.fused_attention import _cudnn_runs
    from keras_bert3.ops.fused_attention import attention_reference
    from keras_bert3.ops.fused_attention import fused_attention

    rng = np.random.default_rng(0)
    batch, length, heads, head_dim = 8, 128, 16, 64
    q, k, v = (jnp.asarray(rng.normal(size=(batch, length, heads, head_dim)), "bfloat16") for _ in range(3))
    lengths = rng.integers(1, length + 1, size=batch)
    padding = (np.arange(length)[None] < lengths[:, None]).astype("int32")
    pairs = np.zeros((batch, length), "int32")
    for row in range(batch):  # Up to 3 pairs a row, then padding.
        cuts = np.sort(rng.choice(np.arange(1, length), size=3, replace=False))
        pairs[row, : cuts[0]], pairs[row, cuts[0] : cuts[1]], pairs[row, cuts[1] : cuts[2]] = 1, 2, 3
    result = {"cudnn": bool(_cudnn_runs(q))}
    for name, allowed in (("padding", padding), ("packed", np.asarray(packed_attention_mask(pairs)))):
        keep = allowed.any(-1) if allowed.ndim == 3 else np.ones((batch, length), bool)
        weights = jnp.asarray(rng.normal(size=q.shape) * keep[:, :, None, None], "float32")

        def loss(fn, q, k, v):
            return jnp.sum(fn(q, k, v, allowed).astype("float32") * weights)

        up = lambda t: t.astype("float32")
        fused = jax.jit(jax.value_and_grad(lambda *a: loss(fused_attention, *a), argnums=(0, 1, 2)))(q, k, v)
        exact = jax.jit(jax.value_and_grad(lambda *a: loss(attention_reference, *a), argnums=(0, 1, 2)))(
            up(q), up(k), up(v)
        )
        out_fused = np.asarray(fused_attention(q, k, v, allowed), "float32")[keep]
        out_exact = np.asarray(attention_reference(up(q), up(k), up(v), allowed))[keep]
        relative = lambda a, b: float(
            np.linalg.norm(np.asarray(a, "float32") - np.asarray(b, "float32"))
            / np.linalg.norm(np.asarray(b, "float32"))
        )
        result[name] = {
            "output": relative(out_fused, out_exact),
            "grads": [relative(a, b) for a, b in zip(fused[1], exact[1])],
        }
        result[name + "_dropout"] = reported(check_dropout, q, k, v, allowed, weights)
    result["keep_rate"] = reported(check_keep_rate)
    result["dropout_add_layer_norm"] = reported(check_dropout_add_layer_norm)
    return result


def reported(check, *args):
    """`check(*args)`, or its error: one failing check leaves the others' results."""
    try:
        return check(*args)
    except Exception as error:
        return {"error": f"{type(error).__name__}: {str(error)[:300]}"}


def check_dropout(q, k, v, allowed, weights, rate=0.1, calls=3) -> dict:
    """Fused attention with dropout, one compiled function called `calls`
    times on the same inputs: the masks change from call to call, and each
    call's backward pass uses its forward pass's mask. The output is linear
    in `v`, so `sum(out * w)` equals `<v, d/dv>` when both passes drop the
    same probabilities; across two calls (two masks) it does not."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from keras_bert3.ops.fused_attention import fused_attention

    def loss(v):
        out = fused_attention(q, k, v, allowed, dropout_rate=rate, seed=1234)
        return jnp.sum(out.astype("float32") * weights), out

    step = jax.jit(jax.value_and_grad(loss, has_aux=True))
    runs = [step(v) for _ in range(calls)]
    v32 = np.asarray(v, "float32")
    values = [float(value) for (value, _), _ in runs]
    dots = [float(np.sum(v32 * np.asarray(grad, "float32"))) for _, grad in runs]
    outputs = [np.asarray(out, "float32") for (_, out), _ in runs]
    scale = lambda a: float(np.linalg.norm(a))
    return {
        "outputs_change": [scale(outputs[i] - outputs[i + 1]) / scale(outputs[i]) for i in range(calls - 1)],
        "same_call_identity": [abs(values[i] - dots[i]) / abs(values[i]) for i in range(calls)],
        "cross_call_identity": [abs(values[i] - dots[i + 1]) / abs(values[i]) for i in range(calls - 1)],
    }


def check_dropout_add_layer_norm(rows=128 * 128, width=1024, rate=0.1, calls=20) -> dict:
    """`ops.dropout_add_layer_norm`'s Triton kernels against the unfused ops on this GPU (BERT-large's rows): the
    largest difference of values and gradients in float32, and milliseconds per forward and backward in bfloat16."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from keras_bert3.ops.dropout_add_layer_norm import dropout_add_layer_norm
    from keras_bert3.ops.dropout_add_layer_norm import dropout_add_layer_norm_reference
    from keras_bert3.ops.dropout_add_layer_norm import enable_fused_dropout_add_layer_norm
    from keras_bert3.ops.dropout_add_layer_norm import fused_dropout_add_layer_norm_runs

    rng = np.random.default_rng(0)
    x, sublayer, weights = (rng.normal(size=(rows, width)).astype("float32") for _ in range(3))
    gamma, beta = rng.uniform(0.5, 1.5, size=width).astype("float32"), rng.normal(size=width).astype("float32")
    on_gpu = jax.devices()[0].platform == "gpu"
    enable_fused_dropout_add_layer_norm(interpret=not on_gpu)  # Interpreted: this check tried on a CPU.
    result = {"runs": fused_dropout_add_layer_norm_runs(), "gpu": on_gpu}

    class Seed:  # The same mask words on both sides (`ops.dropout` takes `seed.next()`).
        def __init__(self, words):
            self.words = words

        def next(self):
            return self.words

    def step(fused: bool, dtype: str):
        def loss(x, sublayer, gamma, beta, words):
            function = dropout_add_layer_norm if fused else dropout_add_layer_norm_reference
            y = function(x, sublayer, gamma, beta, 1e-12, rate=rate, seed=Seed(words))
            return jnp.sum(y.astype("float32") * weights)

        arguments = [jnp.asarray(x, dtype), jnp.asarray(sublayer, dtype), gamma, beta, jnp.asarray([0, 1], "uint32")]
        return jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2, 3))), arguments

    (fused, arguments), (unfused, _) = step(True, "float32"), step(False, "float32")
    (_, a), (_, b) = fused(*arguments), unfused(*arguments)
    result["float32_max_gradient_difference"] = [float(jnp.max(jnp.abs(g - h))) for g, h in zip(a, b)]
    for name, fused_side in (("fused", True), ("unfused", False)):
        compiled, arguments = step(fused_side, "bfloat16")
        jax.block_until_ready(compiled(*arguments))
        start = time.perf_counter()
        for _ in range(calls):
            out = compiled(*arguments)
        jax.block_until_ready(out)
        result[f"{name}_bfloat16_ms"] = 1000 * (time.perf_counter() - start) / calls
    return result


def check_keep_rate(rate=0.1, length=64) -> float:
    """The share of probabilities the fused kernel drops: equal scores (zero
    queries) over `length` keys, each value a one-hot of its key, so each
    output element is one probability, 0 where it was dropped."""
    import jax.numpy as jnp
    import numpy as np

    from keras_bert3.ops.fused_attention import fused_attention

    batch, heads = 16, 16
    q = jnp.zeros((batch, length, heads, 64), "bfloat16")
    k = jnp.asarray(np.random.default_rng(1).normal(size=q.shape), "bfloat16")
    v = jnp.broadcast_to(jnp.eye(length, 64, dtype="bfloat16")[None, :, None, :], q.shape)
    out = np.asarray(fused_attention(q, k, v, np.ones((batch, length), "int32"), dropout_rate=rate, seed=99), "float32")
    return float(np.mean(out[..., :length] == 0))


# === Hugging Face rows (PyTorch) ===


def run_huggingface(row: str, args) -> dict:
    import torch
    import transformers

    spec = parse_row(row, args)
    size, length, batch_size = spec["size"], spec["length"], spec["batch"]
    layers, hidden, _ = SIZES[size]
    batches = load_batches(args.run, BATCH_FILES[(length, batch_size)])
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"  # The CPU: a check that the row runs, no figures.
    model = transformers.BertForPreTraining(pretraining_config(size)).to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01, fused=device == "cuda")
    step = torch.compile(model)

    def to_torch(x, y, w):
        ids = torch.as_tensor(x["token_ids"], dtype=torch.long)
        labels = torch.full_like(ids, -100)
        positions = torch.as_tensor(x["mask_positions"], dtype=torch.long)
        real = torch.as_tensor(w["mlm"]) > 0
        rows = torch.arange(ids.shape[0])[:, None].expand_as(positions)
        labels[rows[real], positions[real]] = torch.as_tensor(y["mlm"], dtype=torch.long)[real]
        inputs = {
            "input_ids": ids,
            "token_type_ids": x["segment_ids"],
            "attention_mask": x["padding_mask"],
            "labels": labels,
            "next_sentence_label": y["nsp"],
        }
        return {k: torch.as_tensor(v, dtype=torch.long).to(device) for k, v in inputs.items()}

    device_batches = [to_torch(*b) for b in batches]
    seconds, losses = [], []
    for epoch in range(1 + args.timed_epochs):
        start = time.perf_counter()
        for i in range(args.steps):
            with torch.autocast(device, dtype=torch.bfloat16):
                loss = step(**device_batches[i % len(device_batches)]).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        losses.append(float(loss))  # Waits for the step.
        seconds.append(time.perf_counter() - start)
        log(f"{row}: epoch {epoch} {seconds[-1]:.2f} s, loss {losses[-1]:.3f}")
    name = torch.cuda.get_device_name(0) if device == "cuda" else "CPU"
    result = rates(seconds[1:], args.steps, batches, False, layers, hidden, name)
    result.update(
        device=name,
        first_epoch_s=seconds[0],
        loss_first=losses[0],
        loss_last=losses[-1],
        batch_size=batch_size,
        peak_memory_gib=torch.cuda.max_memory_allocated() / 2**30 if device == "cuda" else 0.0,
        versions={"torch": torch.__version__, "transformers": transformers.__version__},
    )
    return result


# === Driver ===

START = time.perf_counter()


def log(message: str) -> None:
    print(f"    [{time.perf_counter() - START:6.1f} s] {message}", file=sys.stderr, flush=True)


def child(row: str, args) -> None:
    start = time.perf_counter()
    try:
        if row == "check-fused":
            result = run_check_fused(args)
        elif row.startswith("hf-"):
            result = run_huggingface(row, args)
        else:
            result = run_ours(row, args)
    except Exception as error:  # A row's failure is reported, not fatal.
        import traceback

        traceback.print_exc()
        result = {"error": f"{type(error).__name__}: {str(error)[:500]}"}
    result["wall_s"] = time.perf_counter() - start
    print("RESULT " + json.dumps({"row": row, **result}), flush=True)


def run_rows(args) -> None:
    """Each row in its own process while the budget lasts; results appended to `--out`/results.jsonl."""
    os.makedirs(args.out, exist_ok=True)
    for row in args.rows:
        left = args.budget - (time.perf_counter() - START)
        if left < args.row_minimum:
            log(f"{row}: skipped, {left:.0f} s left")
            continue
        command = [sys.executable, os.path.abspath(__file__), "--child", row] + sys.argv[1:]
        try:
            done = subprocess.run(command, stdout=subprocess.PIPE, text=True, timeout=left)
            lines = [line[7:] for line in done.stdout.splitlines() if line.startswith("RESULT ")]
            result = json.loads(lines[-1]) if lines else {"row": row, "error": f"exit {done.returncode}, no result"}
        except subprocess.TimeoutExpired:
            result = {"row": row, "error": f"stopped after {left:.0f} s (budget)"}
        with open(os.path.join(args.out, "results.jsonl"), "a") as file:
            file.write(json.dumps(result) + "\n")
        log(json.dumps(result)[:400])
    summarize(os.path.join(args.out, "results.jsonl"))


def summarize(path: str) -> None:
    print("\n| row | seq/s (worst) | real tokens/s | MFU padded / real | memory GiB | first epoch s |")
    print("| --- | ---: | ---: | --- | ---: | ---: |")
    with open(path) as file:
        for line in file:
            r = json.loads(line)
            if "sequences_per_s" not in r:
                print(f"| {r['row']} | {json.dumps({k: v for k, v in r.items() if k != 'row'})[:300]} |")
                continue
            print(
                f"| {r['row']} | {r['sequences_per_s']:,.0f} ({r['sequences_per_s_worst']:,.0f}) | "
                f"{r['real_tokens_per_s']:,.0f} | {r.get('mfu_padded', 0):.1%} / {r.get('mfu_real', 0):.1%} | "
                f"{r['peak_memory_gib']:.1f} | {r['first_epoch_s']:.0f} |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepare", help="write the batches to this folder (needs TensorFlow)")
    parser.add_argument("--prepare-batches", type=int, default=12)
    parser.add_argument("--run", help="the folder of prepared batches")
    parser.add_argument("--rows", nargs="+", default=[])
    parser.add_argument("--quick", action="store_true", help="the rows of QUICK_ROWS (about 8 minutes of a GPU)")
    parser.add_argument("--out", default="gpu_step_out")
    parser.add_argument("--profile", help="the row to profile")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--timed-epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, help="override the batch size (the prepared files must exist)")
    parser.add_argument("--budget", type=float, default=540, help="seconds: no row starts after this")
    parser.add_argument("--row-minimum", type=float, default=45, help="seconds a row needs to be started")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.prepare:
        prepare(args.prepare, args.prepare_batches)
    elif args.child:
        child(args.child, args)
    else:
        if args.quick and not args.rows:
            args.rows = QUICK_ROWS
        run_rows(args)


if __name__ == "__main__":
    main()
