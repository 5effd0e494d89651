"""The error of a run whose loss or weights stopped being finite."""


class TrainingDiverged(FloatingPointError):
    """Training diverged at `step`: `what` happened. The message names the last checkpoint (`checkpoint`, at
    `checkpoint_step`) to resume from with a lower learning rate, or says that there is none, or (`blown_up`: why) that
    its weights are blown up too and to remove it."""

    def __init__(
        self,
        step: int | None,
        what: str,
        checkpoint: str | None,
        checkpoint_step: int | None = None,
        *,
        blown_up: str = "",
    ):
        at = f" at step {step:,}" if step is not None else ""
        if checkpoint is None:
            kept = "No checkpoint was written before it: lower the learning rate and run again (it starts over)."
        elif blown_up:
            kept = (
                f"The last checkpoint, {checkpoint}, is blown up too ({blown_up}): remove it (rm -r {checkpoint}), "
                "then run again with a lower learning rate (keras-bert3 pretrain: the same command with a lower "
                "--learning-rate; it starts over)."
            )
        else:
            of_step = f" (step {checkpoint_step:,})" if checkpoint_step is not None else ""
            kept = (
                f"The last checkpoint, {checkpoint}{of_step}, holds finite weights: lower the learning rate and "
                "run again to resume from it (keras-bert3 pretrain: the same command with a lower --learning-rate)."
            )
        super().__init__(f"Training diverged{at}: {what}. {kept}")
        self.step, self.what, self.checkpoint = step, what, checkpoint
