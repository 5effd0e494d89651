"""BERT's learning-rate schedule: linear warmup, then linear decay to zero (or a cosine, or none)."""

import math

import keras
from keras import ops

from keras_bert3.upstream.compiled_state import learning_rate_schedule


# The shapes of the learning rate after warmup (`decay`): Hugging Face's `--lr_scheduler_type` of the same names.
SCHEDULES = ("linear", "cosine", "constant")


@keras.saving.register_keras_serializable(package="keras_bert3")
class LinearWarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """Rises linearly from 0 to `peak_learning_rate` over `warmup_steps`, then falls to `end_learning_rate` at
    `total_steps` and stays there: linearly (`decay="linear"`, google-research/bert `optimization.py`), along half a
    cosine (`"cosine"`, Hugging Face's `get_cosine_schedule_with_warmup`), or not at all (`"constant"`).

    Steps are optimizer updates: where Keras accumulates gradients over `steps_per_update` batches
    (`gradient_accumulation_steps`), it calls the schedule with the batches done, which are divided by that.

    Args:
        peak_learning_rate: float. The rate at the end of warmup.
        warmup_steps: int. Steps of linear warmup (0 for none).
        total_steps: int. Step at which the decay reaches `end_learning_rate`.
        decay: str. One of `SCHEDULES`.
        steps_per_update: int. Batches an optimizer update (the optimizer's `gradient_accumulation_steps`).

    Example:
    >>> schedule = LinearWarmupLinearDecay(1e-4, warmup_steps=100, total_steps=1000)
    >>> float(schedule(50)), float(schedule(100)), float(schedule(550))
    (5e-05, 0.0001, 5e-05)
    """

    def __init__(
        self,
        peak_learning_rate: float,
        warmup_steps: int,
        total_steps: int,
        end_learning_rate: float = 0.0,
        decay: str = "linear",
        steps_per_update: int = 1,
    ):
        if total_steps <= warmup_steps:
            raise ValueError(f"total_steps={total_steps} must exceed warmup_steps={warmup_steps}.")
        if decay not in SCHEDULES:
            raise ValueError(f"decay={decay!r}: use one of {', '.join(SCHEDULES)}.")
        self.peak_learning_rate = peak_learning_rate
        self.warmup_steps = warmup_steps
        self.total_steps = total_steps
        self.end_learning_rate = end_learning_rate
        self.decay = decay
        self.steps_per_update = max(int(steps_per_update), 1)
        self.warmup_ratio_to_size = None  # Set by `sized_by_first_fit`: the schedule's length is not known yet.
        self.warmup_steps_to_size = None  # The warmup a `sized_by_first_fit` schedule was given in steps, if any.

    @classmethod
    def for_fine_tuning(
        cls,
        peak_learning_rate: float,
        warmup_ratio: float,
        total_steps: int | None,
        *,
        warmup_steps: int | None = None,
        decay: str = "linear",
        steps_per_update: int = 1,
    ):
        """`warmup_steps`, or else `warmup_ratio` of `total_steps`, for warmup; `total_steps` None: `sized_by_first_fit`."""
        options = dict(decay=decay, steps_per_update=steps_per_update)
        if total_steps is None:
            schedule = cls.sized_by_first_fit(peak_learning_rate, warmup_ratio, **options)
            schedule.warmup_steps_to_size = warmup_steps
            return schedule
        warmup = int(warmup_ratio * total_steps) if warmup_steps is None else min(warmup_steps, total_steps - 1)
        return cls(peak_learning_rate, warmup, max(total_steps, 1), **options)

    @classmethod
    def sized_by_first_fit(cls, peak_learning_rate: float, warmup_ratio: float, **options) -> "LinearWarmupLinearDecay":
        """A schedule whose length is set by `size_to` (a task's first `fit`), with `warmup_ratio` of it
        for warmup; until then a placeholder of a million steps.

        Example:
        >>> schedule = LinearWarmupLinearDecay.sized_by_first_fit(5e-5, warmup_ratio=0.1)
        >>> schedule.size_to(300); schedule.warmup_steps, schedule.total_steps
        (30, 300)
        """
        schedule = cls(peak_learning_rate, int(warmup_ratio * 1_000_000), 1_000_000, **options)
        schedule.warmup_ratio_to_size = warmup_ratio
        return schedule

    def size_to(self, total_steps: int) -> None:
        """Sets the length of a schedule of `sized_by_first_fit` to the updates of `total_steps` batches (a fit's), the
        first time only; others keep theirs."""
        if self.warmup_ratio_to_size is None or not total_steps:
            return
        self.total_steps = max(int(total_steps) // self.steps_per_update, 1)
        warmup = self.warmup_steps_to_size
        self.warmup_steps = int(self.warmup_ratio_to_size * self.total_steps) if warmup is None else warmup
        self.warmup_steps = min(self.warmup_steps, self.total_steps - 1)
        self.warmup_ratio_to_size = None

    def __call__(self, step):
        step = ops.cast(ops.floor_divide(step, self.steps_per_update), "float32")
        warmup = self.peak_learning_rate * step / max(self.warmup_steps, 1)
        progress = ops.clip((step - self.warmup_steps) / (self.total_steps - self.warmup_steps), 0.0, 1.0)
        if self.decay == "cosine":
            progress = 0.5 * (1.0 - ops.cos(math.pi * progress))
        elif self.decay == "constant":
            progress = 0.0 * progress
        decay = self.peak_learning_rate + (self.end_learning_rate - self.peak_learning_rate) * progress
        return ops.where(step < self.warmup_steps, warmup, decay)

    def get_config(self):
        return {
            "peak_learning_rate": self.peak_learning_rate,
            "warmup_steps": self.warmup_steps,
            "total_steps": self.total_steps,
            "end_learning_rate": self.end_learning_rate,
            "decay": self.decay,
            "steps_per_update": self.steps_per_update,
        }


def size_schedule_to_fit(optimizer, epochs: int, steps_per_epoch: int | None) -> None:
    """Sizes a `sized_by_first_fit` schedule to `epochs` times `steps_per_epoch` before the first step."""
    inner = getattr(optimizer, "inner_optimizer", optimizer)  # Under loss scaling, the optimizer it wraps.
    schedule = learning_rate_schedule(inner)
    if (
        not isinstance(schedule, LinearWarmupLinearDecay)
        or schedule.warmup_ratio_to_size is None
        or not steps_per_epoch
    ):
        return  # Sized already, or no sizing to do.
    if int(keras.ops.convert_to_numpy(optimizer.iterations)) == 0:  # A variable of a strategy's too.
        schedule.size_to(epochs * steps_per_epoch)
