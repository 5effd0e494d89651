"""Weight-decay exclusions that survive saving."""


class WeightDecayExclusions:
    """A Keras optimizer mixin: `no_weight_decay=[...]` names the variables (by a part of their path,
    e.g. "bias") that get no weight decay, kept in `get_config`, where Keras'
    `exclude_from_weight_decay` is not (a restored optimizer would decay them again)."""

    def __init__(self, *args, no_weight_decay=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.no_weight_decay = list(no_weight_decay)
        if self.no_weight_decay:
            self.exclude_from_weight_decay(var_names=self.no_weight_decay)

    def get_config(self):
        return {**super().get_config(), "no_weight_decay": self.no_weight_decay}
