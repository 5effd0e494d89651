"""The one place where the loss code meets `tf.distribute`: under a TensorFlow strategy each replica must return its
share of the global-batch loss, as the gradients are summed across replicas. On JAX and on one device: nothing to do."""

import keras


def _replica_context():
    if keras.backend.backend() != "tensorflow":
        return None
    import tensorflow as tf

    if tf.distribute.get_strategy().num_replicas_in_sync == 1:
        return None
    return tf.distribute.get_replica_context()


def num_replicas_in_sync() -> int:
    """Replicas that each hold a shard of the batch (1 off TF strategies)."""
    if keras.backend.backend() != "tensorflow":
        return 1
    import tensorflow as tf

    return tf.distribute.get_strategy().num_replicas_in_sync


def cross_replica_sum(value):
    """Sums `value` over the replicas of a TF strategy; identity elsewhere."""
    context = _replica_context()
    if context is None:
        return value
    import tensorflow as tf

    return context.all_reduce(tf.distribute.ReduceOp.SUM, value)


def clip_by_global_norm_across_replicas(gradients, clip_norm: float):
    """Scales every replica's gradient share by `clip_norm / ||sum of shares||` (where that norm exceeds `clip_norm`),
    so that after the all-reduce the update equals one device's clipped global gradient; Keras 3 clips each share by its
    own norm. Returns `None` off TF strategies (the caller clips as usual)."""
    context = _replica_context()
    if context is None:
        return None
    import tensorflow as tf

    present = [g for g in gradients if g is not None]
    summed = context.all_reduce(tf.distribute.ReduceOp.SUM, present)
    # Dense: an IndexedSlices' values repeat rows (its norm is not the gradient's).
    norm = tf.linalg.global_norm([tf.convert_to_tensor(g) for g in summed])
    scale = clip_norm * tf.minimum(1.0 / norm, 1.0 / clip_norm)

    # Dense, as Keras' clipping gives: Adam would square an IndexedSlices' repeated rows apart.
    return [None if g is None else tf.convert_to_tensor(g) * tf.cast(scale, g.dtype) for g in gradients]
