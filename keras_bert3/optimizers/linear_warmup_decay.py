"""BERT's learning-rate schedule: linear warmup, then linear decay to zero."""

import keras
from keras import ops

from keras_bert3.upstream.compiled_state import learning_rate_schedule


@keras.saving.register_keras_serializable(package="keras_bert3")
class LinearWarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """Rises linearly from 0 to `peak_learning_rate` over `warmup_steps`, then falls linearly to
    `end_learning_rate` at `total_steps` and stays there (google-research/bert `optimization.py`).

    Args:
        peak_learning_rate: float. The rate at the end of warmup.
        warmup_steps: int. Steps of linear warmup (0 for none).
        total_steps: int. Step at which the decay reaches `end_learning_rate`.

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
    ):
        if total_steps <= warmup_steps:
            raise ValueError(f"total_steps={total_steps} must exceed warmup_steps={warmup_steps}.")
        self.peak_learning_rate = peak_learning_rate
        self.warmup_steps = warmup_steps
        self.total_steps = total_steps
        self.end_learning_rate = end_learning_rate
        self.warmup_ratio_to_size = None  # Set by `sized_by_first_fit`: the schedule's length is not known yet.

    @classmethod
    def for_fine_tuning(cls, peak_learning_rate: float, warmup_ratio: float, total_steps: int | None):
        """`warmup_ratio` of `total_steps` for warmup; `total_steps` None: `sized_by_first_fit`."""
        if total_steps is None:
            return cls.sized_by_first_fit(peak_learning_rate, warmup_ratio)
        return cls(peak_learning_rate, int(warmup_ratio * total_steps), total_steps)

    @classmethod
    def sized_by_first_fit(cls, peak_learning_rate: float, warmup_ratio: float) -> "LinearWarmupLinearDecay":
        """A schedule whose length is set by `size_to` (a task's first `fit`), with `warmup_ratio` of it
        for warmup; until then a placeholder of a million steps.

        Example:
        >>> schedule = LinearWarmupLinearDecay.sized_by_first_fit(5e-5, warmup_ratio=0.1)
        >>> schedule.size_to(300); schedule.warmup_steps, schedule.total_steps
        (30, 300)
        """
        schedule = cls(peak_learning_rate, int(warmup_ratio * 1_000_000), 1_000_000)
        schedule.warmup_ratio_to_size = warmup_ratio
        return schedule

    def size_to(self, total_steps: int) -> None:
        """Sets the length of a schedule of `sized_by_first_fit`, the first time only; others keep theirs."""
        if self.warmup_ratio_to_size is None or not total_steps:
            return
        self.total_steps = max(int(total_steps), 1)
        self.warmup_steps = int(self.warmup_ratio_to_size * self.total_steps)
        self.warmup_ratio_to_size = None

    def __call__(self, step):
        step = ops.cast(step, "float32")
        warmup = self.peak_learning_rate * step / max(self.warmup_steps, 1)
        progress = ops.clip((step - self.warmup_steps) / (self.total_steps - self.warmup_steps), 0.0, 1.0)
        decay = self.peak_learning_rate + (self.end_learning_rate - self.peak_learning_rate) * progress
        return ops.where(step < self.warmup_steps, warmup, decay)

    def get_config(self):
        return {
            "peak_learning_rate": self.peak_learning_rate,
            "warmup_steps": self.warmup_steps,
            "total_steps": self.total_steps,
            "end_learning_rate": self.end_learning_rate,
        }


def size_schedule_to_fit(optimizer, epochs: int, steps_per_epoch: int | None) -> None:
    """Sizes a `sized_by_first_fit` schedule to `epochs` times `steps_per_epoch` before the first step."""
    inner = getattr(optimizer, "inner_optimizer", optimizer)  # Under loss scaling, the optimizer it wraps.
    schedule = learning_rate_schedule(inner)
    if isinstance(schedule, LinearWarmupLinearDecay) and int(optimizer.iterations) == 0 and steps_per_epoch:
        schedule.size_to(epochs * steps_per_epoch)
