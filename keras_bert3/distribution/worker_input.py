"""Input per worker: each `tf.distribute` worker and JAX process builds its own dataset from its own share of the files,
so input rate grows with the workers and a pass covers the corpus once (Keras otherwise shards by data: every worker
builds the whole stream and keeps one example in N)."""

import hashlib
import os

import keras
import tensorflow as tf


def worker_dataset(make_dataset, global_batch_size: int):
    """The dataset `fit` should get under the current distribution: each worker's, built by
    `make_dataset(input_context, batch_size)` (a batched `tf.data.Dataset` of its share, `batch_size`
    per worker); under a TF strategy, a distributed dataset (`distribute_datasets_from_function`)."""
    if keras.backend.backend() == "tensorflow" and tf.distribute.has_strategy():
        strategy = tf.distribute.get_strategy()

        def per_worker(context):
            return make_dataset(context, context.get_per_replica_batch_size(global_batch_size))

        return strategy.distribute_datasets_from_function(per_worker)
    if keras.backend.backend() == "jax" and keras.distribution.distribution() is not None:
        import jax

        processes = jax.process_count()
        if processes > 1:
            # Each process gives its own share; Keras would shard it by data.
            keras.distribution.distribution().auto_shard_dataset = False
            if global_batch_size % processes:
                raise ValueError(
                    f"The batch size {global_batch_size} does not split evenly over "
                    f"{processes} processes: use a multiple of {processes}."
                )
            # One batch per process per step: Keras spreads it over the process's devices.
            context = tf.distribute.InputContext(processes, jax.process_index(), processes)
            return make_dataset(context, global_batch_size // processes)
    return make_dataset(None, global_batch_size)


def unsharded_by_tf_distribute(dataset: tf.data.Dataset) -> tf.data.Dataset:
    """Marks a worker's own share so that `tf.distribute` does not shard it again."""
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
    return dataset.with_options(options)


def files_for_worker(
    paths: list[str], input_context: tf.distribute.InputContext | None, what: str = "files"
) -> list[str]:
    """This worker's share of `paths` (sorted the same on every worker), `paths[index::count]`;
    raises `ValueError` where workers outnumber the files or see different ones."""
    if input_context is None or input_context.num_input_pipelines == 1:
        return paths
    count, index = input_context.num_input_pipelines, input_context.input_pipeline_id
    check_same_on_workers(paths, what)
    if count > len(paths):
        raise ValueError(
            f"{count} workers read the corpus but it has only {len(paths)} {what}: each worker "
            f"reads its own {what}, so some would have none. Split the corpus into at least {count} "
            "files (e.g. `split -n l/N`, at blank lines for the one-sentence-a-line format), or build "
            "shards with `keras-bert3 prepare-data --num-shards` a multiple of the worker count."
        )
    return paths[index::count]


def check_same_on_workers(paths: list[str], what: str = "files") -> None:
    """Raises on every worker where the workers' lists of `paths` (names and sizes)
    differ (globs expanded on different disks, or while files are written)."""
    described = "\n".join(f"{os.path.basename(p)}\t{tf.io.gfile.stat(p).length}" for p in paths)
    digest = int.from_bytes(hashlib.sha256(described.encode()).digest()[:3], "little")  # Exact in float32.
    low, high = _min_and_max_over_workers(float(digest))
    if low != high:
        raise ValueError(
            f"The workers see different {what}: this one sees {len(paths)} ({paths[:3]}...). "
            "Every worker must see the same list (same glob, same files, same sizes): use a shared "
            "file system or the same copy on every host, and do not change the files during a run."
        )


def _min_and_max_over_workers(value: float) -> tuple[float, float]:
    if keras.backend.backend() == "tensorflow" and tf.distribute.has_strategy():
        strategy = tf.distribute.get_strategy()
        gathered = strategy.gather(strategy.run(lambda: tf.constant([value], tf.float32)), axis=0).numpy()
        return float(gathered.min()), float(gathered.max())
    import jax
    from jax.experimental import multihost_utils

    if jax.process_count() == 1:
        return value, value
    gathered = multihost_utils.process_allgather(jax.numpy.array([value], jax.numpy.float32))
    return float(gathered.min()), float(gathered.max())
