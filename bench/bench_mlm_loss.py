"""The MLM loss's two formulations, on each backend: Keras'
`sparse_categorical_crossentropy` + `argmax` (a one-hot as wide as the
vocabulary on JAX; TensorFlow's fused kernel) against `logsumexp - the label's
logit` + `max` (a gather), loss, hits and the gradient for 640 masked
positions (batch 32 x 20) over BERT's 30,522-token vocabulary. Each backend in
its own process; rounds alternate the two; prints the best, the spread and
the ratio, and checks that both give the same loss, hits and gradient.
Both are `keras_bert3.ops.sparse_cross_entropy`'s; `sparse_cross_entropy_with_hits`
takes the faster one per backend.

    python bench/bench_mlm_loss.py
"""

import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

ROWS, VOCABULARY, ROUNDS, CALLS = 640, 30522, 5, 10


def compiled_step(formulation, labels, weights):
    """A compiled function: logits -> (weighted loss, weighted hits, d loss / d logits)."""
    import keras
    from keras import ops

    def loss_and_hits(logits):
        loss, hits = formulation(labels, logits)
        return ops.sum(loss * weights), ops.sum(hits * weights)

    if keras.backend.backend() == "jax":
        import jax

        jitted = jax.jit(jax.value_and_grad(loss_and_hits, has_aux=True))
        return lambda logits: jax.tree_util.tree_map(np.asarray, jitted(logits))
    import tensorflow as tf

    @tf.function
    def step(logits):
        with tf.GradientTape() as tape:
            tape.watch(logits)
            loss, hits = loss_and_hits(logits)
        return (loss, hits), tape.gradient(loss, logits)

    return lambda logits: tf.nest.map_structure(lambda t: t.numpy(), step(tf.constant(logits)))


def run_backend() -> None:
    import keras

    from keras_bert3.ops.sparse_cross_entropy import gathered_cross_entropy_with_hits
    from keras_bert3.ops.sparse_cross_entropy import sparse_cross_entropy_with_hits_reference

    rng = np.random.default_rng(0)
    logits = rng.normal(size=(ROWS, VOCABULARY)).astype("float32")
    labels = rng.integers(0, VOCABULARY, size=ROWS).astype("int32")
    weights = (rng.random(ROWS) < 0.9).astype("float32")
    steps = {
        "keras_op": compiled_step(sparse_cross_entropy_with_hits_reference, labels, weights),
        "gather": compiled_step(gathered_cross_entropy_with_hits, labels, weights),
    }
    results = {name: step(logits) for name, step in steps.items()}
    (loss_a, hits_a), grad_a = results["keras_op"]
    (loss_b, hits_b), grad_b = results["gather"]
    assert abs(loss_a - loss_b) <= 1e-5 * abs(loss_a) and hits_a == hits_b, (loss_a, loss_b, hits_a, hits_b)
    assert np.abs(grad_a - grad_b).max() < 1e-6
    times = {name: [] for name in steps}
    for _ in range(ROUNDS):
        for name, step in steps.items():
            start = time.perf_counter()
            for _ in range(CALLS):
                step(logits)
            times[name].append((time.perf_counter() - start) / CALLS * 1000)
    best = {name: min(values) for name, values in times.items()}
    for name, values in times.items():
        print(
            f"{keras.backend.backend():10} {name:8} best {min(values):6.1f} ms (spread {min(values):.1f}-{max(values):.1f})"
        )
    print(f"{keras.backend.backend():10} keras_op / gather: {best['keras_op'] / best['gather']:.2f}x")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        run_backend()
        return
    print(f"Load average before: {os.getloadavg()[0]:.2f}")
    for backend in ("tensorflow", "jax"):
        env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
        subprocess.run([sys.executable, __file__, "--child"], env=env, check=True)
    print(f"Load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
