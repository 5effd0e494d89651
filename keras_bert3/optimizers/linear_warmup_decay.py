"""BERT's learning-rate schedule: linear warmup, then linear decay to zero."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_bert3")
class LinearWarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """Rises linearly from 0 to `peak_learning_rate` over `warmup_steps`, then
    falls linearly to `end_learning_rate` at `total_steps` and stays there.

    As in google-research/bert `optimization.py` (warmup, then polynomial decay
    of power 1). Keras has warmup only for cosine decay.

    Args:
        peak_learning_rate: float. The rate at the end of warmup.
        warmup_steps: int. Steps of linear warmup (0 for none).
        total_steps: int. Step at which the decay reaches `end_learning_rate`.
        end_learning_rate: float.

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
