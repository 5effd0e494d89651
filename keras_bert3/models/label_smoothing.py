"""Label smoothing for the tasks' losses: a task's loss with its targets moved off 1 and 0 (Szegedy et al. 2016), as
Hugging Face's `--label_smoothing_factor` does."""

import keras


@keras.saving.register_keras_serializable(package="keras_bert3")
class SmoothedSparseCategoricalCrossentropy(keras.losses.Loss):
    """`keras.losses.SparseCategoricalCrossentropy` (integer labels, `ignore_class` kept out of the mean) against targets
    of `1 - label_smoothing` on the label plus `label_smoothing` spread evenly over all classes: Keras'
    `CategoricalCrossentropy(label_smoothing=...)` of the one-hot labels, and Hugging Face's `LabelSmoother`.

    Example:
    >>> loss = SmoothedSparseCategoricalCrossentropy(0.1, from_logits=True)
    """

    def __init__(self, label_smoothing: float, *, from_logits=False, ignore_class=None, name=None, **kwargs):
        super().__init__(name=name or "smoothed_sparse_categorical_crossentropy", **kwargs)
        self.label_smoothing = float(label_smoothing)
        self.from_logits = from_logits
        self.ignore_class = ignore_class

    def call(self, y_true, y_pred):
        ops = keras.ops
        y_true = ops.cast(y_true, "int32")
        if len(y_true.shape) == len(y_pred.shape):  # (..., 1) labels, as Keras' sparse losses take them.
            y_true = ops.squeeze(y_true, axis=-1)
        valid = None
        if self.ignore_class is not None:
            valid = ops.not_equal(y_true, self.ignore_class)
            y_true = ops.where(valid, y_true, 0)
        targets = ops.one_hot(y_true, ops.shape(y_pred)[-1], dtype=y_pred.dtype)
        loss = keras.losses.categorical_crossentropy(
            targets, y_pred, from_logits=self.from_logits, label_smoothing=self.label_smoothing
        )
        if valid is None:
            return loss
        weight = ops.cast(valid, loss.dtype)
        if self.reduction in ("mean", "sum_over_batch_size"):  # A mean over the labelled ones, as Keras' own.
            total = ops.cast(ops.size(weight), loss.dtype)
            weight = weight * ops.divide_no_nan(total, ops.sum(weight))
        return loss * weight

    def get_config(self):
        return super().get_config() | {
            "label_smoothing": self.label_smoothing,
            "from_logits": self.from_logits,
            "ignore_class": self.ignore_class,
        }


def smoothed(loss, label_smoothing: float):
    """`loss` (a Keras loss, or a dict of them by output) with `label_smoothing`; 0 gives it unchanged. A loss of
    classes (sparse or binary cross-entropy) is smoothed; any other is refused, naming it."""
    if not label_smoothing:
        return loss
    if isinstance(loss, dict):
        return {name: smoothed(each, label_smoothing) for name, each in loss.items()}
    if isinstance(loss, keras.losses.SparseCategoricalCrossentropy):
        config = loss.get_config()
        return SmoothedSparseCategoricalCrossentropy(
            label_smoothing, from_logits=config["from_logits"], ignore_class=config.get("ignore_class")
        )
    if isinstance(loss, keras.losses.BinaryCrossentropy):
        return keras.losses.BinaryCrossentropy(
            from_logits=loss.get_config()["from_logits"], label_smoothing=label_smoothing
        )
    raise ValueError(
        f"label_smoothing={label_smoothing}, but the loss {type(loss).__name__} has no classes to smooth (a "
        "regressor's has none): leave it at 0."
    )
