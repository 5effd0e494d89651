"""The BERT pretraining recipe's optimizer, one call away."""

import keras

from keras_bert3.optimizers.linear_warmup_decay import LinearWarmupLinearDecay
from keras_bert3.optimizers.bert_adamw import BertAdamW
from keras_bert3.optimizers.bert_lamb import BertLamb

# No weight decay on LayerNorm ("gamma", "beta") and biases, as in google-research/bert.
NO_WEIGHT_DECAY = ["gamma", "beta", "bias"]


def bert_optimizer(
    *,
    learning_rate: float | keras.optimizers.schedules.LearningRateSchedule = 1e-4,
    total_steps: int = 1_000_000,
    warmup_steps: int | None = None,
    weight_decay: float = 0.01,
    kind: str = "adamw",
    global_clipnorm: float | None = 1.0,
    gradient_accumulation_steps: int | None = None,
) -> keras.optimizers.Optimizer:
    """AdamW (or LAMB) with BERT's settings.

    Devlin et al. 2019, appendix A.2: Adam with beta_1 0.9, beta_2 0.999, epsilon 1e-6 (added as PyTorch's AdamW adds
    it, see `BertAdamW`), decoupled weight decay 0.01 (not on LayerNorm or bias), warmup over the first 1% of steps then
    linear decay, gradients clipped to global norm 1.0. `kind="lamb"` uses LAMB (You et al. 2020) for large batches.

    Args:
        learning_rate: float: the peak of BERT's schedule. Or a schedule of your own, used as it is
            (`total_steps` and `warmup_steps` are then ignored).
        total_steps: int. Length of the schedule (training steps).
        warmup_steps: int or None. Default: 1% of `total_steps`.
        gradient_accumulation_steps: int or None. Average gradients over this many batches before each update
            (None or 1: none); BERT's schedule counts updates (`total_steps` are updates).

    Example:
    >>> pretrainer.compile(optimizer=bert_optimizer(learning_rate=5e-4, total_steps=10_000))
    """
    if warmup_steps is None:
        warmup_steps = max(total_steps // 100, 0)
    schedule = learning_rate
    if not isinstance(learning_rate, keras.optimizers.schedules.LearningRateSchedule):
        schedule = LinearWarmupLinearDecay(
            learning_rate, warmup_steps, total_steps, steps_per_update=gradient_accumulation_steps or 1
        )
    options = dict(
        learning_rate=schedule,
        weight_decay=weight_decay,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-6,
        global_clipnorm=global_clipnorm,
        gradient_accumulation_steps=gradient_accumulation_steps if (gradient_accumulation_steps or 1) > 1 else None,
        no_weight_decay=NO_WEIGHT_DECAY,
    )
    if kind == "adamw":
        optimizer = BertAdamW(**options)
    elif kind == "lamb":
        optimizer = BertLamb(**options)
    else:
        raise ValueError(f"kind={kind!r}; use 'adamw' or 'lamb'.")
    return optimizer
