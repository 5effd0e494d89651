"""Weight-decay exclusions that survive saving."""


class WeightDecayExclusions:
    """A Keras optimizer mixin: `no_weight_decay=[...]` names the variables
    (by a part of their path, e.g. "gamma", "bias") that get no weight decay,
    and the names are in `get_config`. Keras' own `exclude_from_weight_decay`
    is kept outside the config, so an optimizer restored from a `.keras` file
    or a config would decay LayerNorm and biases again.
    """

    def __init__(self, *args, no_weight_decay=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.no_weight_decay = list(no_weight_decay)
        if self.no_weight_decay:
            self.exclude_from_weight_decay(var_names=self.no_weight_decay)

    def get_config(self):
        return {**super().get_config(), "no_weight_decay": self.no_weight_decay}
