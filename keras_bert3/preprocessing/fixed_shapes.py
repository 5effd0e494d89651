"""Few batch shapes for compiled steps: XLA (every JAX step; TensorFlow's with
`jit_compile=True`) compiles one program per input shape, so batches of raw
texts are padded to one of a few lengths (`length_buckets`), and a last,
partial batch is filled up with empty rows rather than given a shape of its
own. A `fit` then compiles at most one step program per bucket, whatever the
texts' lengths.

An empty row has an all-zero `padding_mask` (a real row always holds
[CLS]), so the model knows it: `real_rows` finds them, and `BertTask` gives
them zero weight in its losses and metrics (`row_weights`).

`FixedShapeBatches` is the one adapter a task applies to its batches,
fixed or not.
"""

import dataclasses

import keras
import numpy as np
import tensorflow as tf

from keras_bert3.preprocessing.word_piece_alignment import IGNORED_LABEL  # Empty rows' per-token labels.


def default_length_buckets(sequence_length: int, accelerator: str) -> tuple[int, ...]:
    """The lengths `BertTask.compile(length_buckets="auto")` pads batches to on
    `accelerator` ("cpu", "gpu" or "tpu", as `devices.accelerator_type` says).

    On a GPU or TPU, `sequence_length` alone: one program to compile. There a
    fine-tuning step of a short batch costs little less than one of the full
    length (the chip waits on kernel launches more than on arithmetic), while
    every further program costs many seconds of compilation before the first
    epoch can end.

    On a CPU, three lengths, each half the next and a multiple of 8 where it
    can be: a step's cost grows with its length, and compiling is quick.
    """
    buckets = {int(sequence_length)}
    if accelerator == "cpu":
        for halvings in (1, 2):
            length = -(-sequence_length // 2**halvings)
            buckets.add(min(-(-length // 8) * 8, sequence_length))
    return tuple(sorted(buckets))


def check_length_buckets(buckets, sequence_length: int) -> tuple[int, ...]:
    """`buckets` as a sorted tuple of ints, refused (ValueError) unless they
    are positive and the largest covers `sequence_length`.
    """
    try:
        buckets = tuple(sorted({int(length) for length in buckets}))
    except (TypeError, ValueError):
        raise ValueError(f"length_buckets={buckets!r} must be a list of lengths (ints), 'auto' or None.") from None
    if not buckets or buckets[0] < 1:
        raise ValueError(f"length_buckets={buckets!r} must hold at least one positive length.")
    if buckets[-1] < sequence_length:
        raise ValueError(
            f"length_buckets={buckets} does not cover sequence_length={sequence_length}: a batch of texts "
            f"at the limit would fit no bucket. Add {sequence_length} (the largest bucket must be at least the "
            "preprocessor's sequence_length)."
        )
    return buckets


def task_length_buckets(setting, sequence_length: int) -> tuple[int, ...] | None:
    """The lengths of `BertTask.compile(length_buckets=setting)`: "auto" gives
    `default_length_buckets` for this machine's accelerator, None none (shapes
    as they come), a list those lengths (`check_length_buckets`).
    """
    if setting == "auto":
        from keras_bert3.distribution.devices import accelerator_type

        return default_length_buckets(sequence_length, accelerator_type())
    return None if setting is None else check_length_buckets(setting, sequence_length)


def bucket_width(width, buckets: tuple[int, ...]):
    """The smallest of `buckets` at least `width` (a scalar int tensor), or
    `width` itself when it exceeds them all."""
    candidates = tf.constant(buckets + (2**30,), tf.int32)
    width = tf.cast(width, tf.int32)
    chosen = tf.gather(candidates, tf.searchsorted(candidates, tf.reshape(width, [1]))[0])
    return tf.where(chosen == 2**30, width, chosen)


def fixed_shape_batches(
    dataset: tf.data.Dataset, *, batch_size: int | None, buckets: tuple[int, ...]
) -> tf.data.Dataset:
    """Batches `inputs`, `(inputs, targets)` or `(inputs, targets,
    sample_weight)` of a task's pipeline, each padded to `batch_size` rows
    (empty rows; a larger batch to a multiple of `batch_size`; None: rows as
    they are) and to the smallest bucket at least its length.

    `inputs` and per-token targets (rank 2: `(batch, length)`) are padded
    along the length, inputs with 0 and targets with -100; per-example
    targets and weights (rank 1) get 0 in empty rows.
    """

    def pad(*element):
        inputs, rest = element[0], element[1:]
        width = tf.shape(inputs["padding_mask"])[1]
        target_width = bucket_width(width, buckets)
        # Up to `batch_size` rows, or its next multiple for a larger batch (a dataset batched by its user).
        rows = 0 if batch_size is None else -tf.shape(inputs["padding_mask"])[0] % batch_size

        def padded(tensor, value):
            paddings = [[0, rows]] + ([[0, target_width - width]] if tensor.shape.rank >= 2 else [])
            paddings += [[0, 0]] * (tensor.shape.rank - len(paddings))
            result = tf.pad(tensor, paddings, constant_values=tf.cast(value, tensor.dtype))
            return tf.ensure_shape(result, [None] * tensor.shape.rank)

        inputs = {name: padded(value, 0) for name, value in inputs.items()}
        rest = tf.nest.map_structure(lambda t: padded(t, IGNORED_LABEL if t.shape.rank >= 2 else 0), rest)
        return (inputs, *rest) if rest else inputs

    return dataset.map(pad)


def fixed_shape_specs(element_spec, *, batch_size: int, buckets: tuple[int, ...]) -> list:
    """The batches `fixed_shape_batches` can yield, one per bucket: `element_spec`
    (a task pipeline's, as `KerasTensor`s) with `batch_size` rows and the
    bucket's length wherever the length is open.
    """

    def shaped(spec, length):
        shape = [batch_size] + [length if size is None else size for size in spec.shape[1:]]
        return keras.KerasTensor(tuple(shape), dtype=spec.dtype.name)

    return [tf.nest.map_structure(lambda spec: shaped(spec, length), element_spec) for length in buckets]


def fixed_shape_arrays(model_inputs: dict, *, batch_size: int, buckets: tuple[int, ...]) -> dict:
    """One batch of numpy model inputs `(n <= batch_size, length)` padded as
    `fixed_shape_batches` pads: to `batch_size` rows and a bucket's length.
    """
    rows, width = np.shape(model_inputs["padding_mask"])
    target = next((length for length in buckets if length >= width), width)
    return {
        name: np.pad(np.asarray(value), [(0, batch_size - rows), (0, target - width)])
        for name, value in model_inputs.items()
    }


@dataclasses.dataclass(frozen=True)
class FixedShapeBatches:
    """How a task's batches are shaped: padded to `buckets` and filled with
    empty rows (`fixed_shape_batches`), or, with `buckets` None, as they come
    (every method then passes its input through).
    """

    buckets: tuple[int, ...] | None = None

    def dataset(self, dataset: tf.data.Dataset, *, batch_size: int | None) -> tf.data.Dataset:
        """A task pipeline's batches, fixed (rows filled to `batch_size` unless None)."""
        if self.buckets is None:
            return dataset
        return fixed_shape_batches(dataset, batch_size=batch_size, buckets=self.buckets)

    def arrays(self, model_inputs: dict, *, batch_size: int) -> dict:
        """One batch of numpy model inputs, fixed (`fixed_shape_arrays`)."""
        return (
            model_inputs
            if self.buckets is None
            else fixed_shape_arrays(model_inputs, batch_size=batch_size, buckets=self.buckets)
        )

    def cut(self, outputs, *, rows: int, length: int | None = None):
        """The outputs of an `arrays` batch back to its `rows` (and, for per-token outputs, its `length`)."""
        if self.buckets is None:
            return outputs
        cut = (slice(rows),) if length is None else (slice(rows), slice(length))
        return keras.tree.map_structure(lambda output: np.asarray(output)[cut], outputs)

    def step_specs(self, element_spec, *, batch_size: int) -> list:
        """The batches `dataset` can yield, one per bucket (`fixed_shape_specs`); none unless fixed."""
        return (
            [] if self.buckets is None else fixed_shape_specs(element_spec, batch_size=batch_size, buckets=self.buckets)
        )


def real_rows(inputs: dict):
    """float32 `(batch,)`: 1 for a real row, 0 for an empty one (all-zero `padding_mask`)."""
    return keras.ops.cast(keras.ops.any(keras.ops.not_equal(inputs["padding_mask"], 0), axis=-1), "float32")


def row_weights(inputs: dict, sample_weight=None, *, rescale: bool):
    """Loss weights `(batch,)` that leave empty rows out: 0 for them, and for
    real rows `sample_weight` (or 1), times `batch / real rows` when `rescale`
    (a mean over the batch then equals the mean over its real rows, as Keras'
    default "sum_over_batch_size" reduction divides by the batch). Without
    empty rows the weights are `sample_weight`, or exactly 1."""
    real = real_rows(inputs)
    weights = real
    if sample_weight is not None:
        sample_weight = keras.ops.cast(sample_weight, "float32")
        while len(weights.shape) < len(sample_weight.shape):
            weights = keras.ops.expand_dims(weights, -1)  # Per-token weights: the row's mark on each token.
        weights = weights * sample_weight
    if rescale:
        count = keras.ops.sum(real)
        weights = weights * (keras.ops.cast(keras.ops.shape(real)[0], "float32") / keras.ops.maximum(count, 1.0))
    return weights
