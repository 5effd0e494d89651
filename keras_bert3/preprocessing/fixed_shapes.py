"""Few batch shapes for compiled steps: XLA compiles one program per input shape, so batches are padded to one of a few
lengths (`length_buckets`) and a partial batch is filled with empty rows. An empty row has an all-zero `padding_mask` (a
real row always holds [CLS]); `row_weights` gives it zero weight."""

import dataclasses

import keras
import numpy as np
import tensorflow as tf

from keras_bert3.preprocessing.word_piece_alignment import IGNORED_LABEL


def default_length_buckets(sequence_length: int, accelerator: str) -> tuple[int, ...]:
    """The lengths of `length_buckets="auto"` on `accelerator` ("cpu", "gpu" or "tpu").

    On a GPU or TPU, `sequence_length` alone: a short step costs nearly a full one, and
    compiling is slow. On a CPU, three lengths, each half the next (multiples of 8)."""
    buckets = {int(sequence_length)}
    if accelerator == "cpu":
        for halvings in (1, 2):
            length = -(-sequence_length // 2**halvings)
            buckets.add(min(-(-length // 8) * 8, sequence_length))
    return tuple(sorted(buckets))


def check_length_buckets(buckets, sequence_length: int) -> tuple[int, ...]:
    """`buckets` sorted; `ValueError` unless positive and the largest covers `sequence_length`."""
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
    """The lengths of `length_buckets=setting`: "auto", None (shapes as they come) or a list."""
    if setting == "auto":
        from keras_bert3.distribution.devices import accelerator_type

        return default_length_buckets(sequence_length, accelerator_type())
    return None if setting is None else check_length_buckets(setting, sequence_length)


def bucket_width(width, buckets: tuple[int, ...]):
    """The smallest of `buckets` at least `width` (a scalar int tensor), else `width`."""
    candidates = tf.constant(buckets + (2**30,), tf.int32)
    width = tf.cast(width, tf.int32)
    chosen = tf.gather(candidates, tf.searchsorted(candidates, tf.reshape(width, [1]))[0])
    return tf.where(chosen == 2**30, width, chosen)


def fixed_shape_batches(
    dataset: tf.data.Dataset, *, batch_size: int | None, buckets: tuple[int, ...], per_token_targets: bool = True
) -> tf.data.Dataset:
    """A task pipeline's batches padded with empty rows to a multiple of `batch_size`
    (None: rows as they are) and to the smallest bucket at least their length.
    Inputs are padded with 0, per-token targets with -100, per-example targets and weights with 0. Targets and
    weights of two or more axes are per token (their second axis the batch's length) where `per_token_targets`;
    otherwise every target is per example (a multi-hot row, a score in a `(batch, 1)` column) and only gets rows."""

    def pad(*element):
        inputs, rest = element[0], element[1:]
        width = tf.shape(inputs["padding_mask"])[-1]  # The length: the last axis (a multiple choice's inputs have 3).
        target_width = bucket_width(width, buckets)
        rows = 0 if batch_size is None else -tf.shape(inputs["padding_mask"])[0] % batch_size

        def padded(tensor, value, length_axis=1):
            paddings = [[0, rows]] + [[0, 0]] * (tensor.shape.rank - 1)
            if tensor.shape.rank >= 2:
                paddings[length_axis] = [0, target_width - width]
            result = tf.pad(tensor, paddings, constant_values=tf.cast(value, tensor.dtype))
            shape = [None] + list(tensor.shape[1:])  # The rows' and the length's sizes vary; a choice axis stays.
            shape[length_axis] = None
            return tf.ensure_shape(result, shape)

        def padded_rows(tensor):
            paddings = [[0, rows]] + [[0, 0]] * (tensor.shape.rank - 1)
            return tf.ensure_shape(tf.pad(tensor, paddings), [None] * tensor.shape.rank)

        inputs = {name: padded(value, 0, length_axis=-1) for name, value in inputs.items()}
        per_token = lambda t: per_token_targets and t.shape.rank >= 2  # noqa: E731
        rest = tf.nest.map_structure(lambda t: padded(t, IGNORED_LABEL) if per_token(t) else padded_rows(t), rest)
        return (inputs, *rest) if rest else inputs

    return dataset.map(pad)


def fixed_shape_specs(element_spec, *, batch_size: int, buckets: tuple[int, ...]) -> list:
    """The batches `fixed_shape_batches` can yield, as `KerasTensor`s, one per bucket."""

    def shaped(spec, length):  # The last axis, where it varies, is the length.
        shape = [batch_size, *spec.shape[1:-1]] + [length if spec.shape[-1] is None else spec.shape[-1]]
        shape = shape[: len(spec.shape)]
        return keras.KerasTensor(tuple(shape), dtype=spec.dtype.name)

    return [tf.nest.map_structure(lambda spec: shaped(spec, length), element_spec) for length in buckets]


def fixed_shape_arrays(model_inputs: dict, *, batch_size: int, buckets: tuple[int, ...]) -> dict:
    """Numpy model inputs `(n <= batch_size, [choices,] length)` padded as `fixed_shape_batches` pads."""
    shape = np.shape(model_inputs["padding_mask"])
    rows, width = shape[0], shape[-1]
    target = next((length for length in buckets if length >= width), width)
    paddings = [(0, batch_size - rows)] + [(0, 0)] * (len(shape) - 2) + [(0, target - width)]
    return {name: np.pad(np.asarray(value), paddings) for name, value in model_inputs.items()}


@dataclasses.dataclass(frozen=True)
class FixedShapeBatches:
    """How a task's batches are shaped: padded to `buckets`, or with `buckets` None as they come."""

    buckets: tuple[int, ...] | None = None
    per_token_targets: bool = True  # The task's targets of two axes are per token (`TaskSpec.per_token_outputs`).

    def dataset(self, dataset: tf.data.Dataset, *, batch_size: int | None) -> tf.data.Dataset:
        """A task pipeline's batches, fixed (rows filled to `batch_size` unless None)."""
        if self.buckets is None:
            return dataset
        options = dict(batch_size=batch_size, buckets=self.buckets, per_token_targets=self.per_token_targets)
        return fixed_shape_batches(dataset, **options)

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
    """float32 `(batch,)`: 1 for a real row, 0 for an empty one (all-zero `padding_mask`, of every choice where a row
    has several)."""
    mask = inputs["padding_mask"]
    axes = tuple(range(1, len(mask.shape)))
    return keras.ops.cast(keras.ops.any(keras.ops.not_equal(mask, 0), axis=axes), "float32")


def row_weights(inputs: dict, sample_weight=None, *, rescale: bool):
    """Loss weights `(batch,)`: 0 for empty rows, `sample_weight` (or 1) for real ones,
    times `batch / real rows` when `rescale` (so "sum_over_batch_size" averages real rows)."""
    real = real_rows(inputs)
    weights = real
    if sample_weight is not None:
        sample_weight = keras.ops.cast(sample_weight, "float32")
        while len(weights.shape) < len(sample_weight.shape):
            weights = keras.ops.expand_dims(weights, -1)
        weights = weights * sample_weight
    if rescale:
        count = keras.ops.sum(real)
        weights = weights * (keras.ops.cast(keras.ops.shape(real)[0], "float32") / keras.ops.maximum(count, 1.0))
    return weights
