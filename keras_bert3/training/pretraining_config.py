"""What a pretraining run does: `PretrainingConfig`'s fields, and its data configs', are the `keras-bert3 pretrain`
flags and mark what a resumed run must keep (`RESUME_FIELDS`). The flat keywords and attributes of 2026-11-28
(`batch_size`, `nsp`, ...) still work for a release, with a `DeprecationWarning`."""

import argparse
import dataclasses

from keras_bert3.data import setting_fields
from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.masking_config import MaskingConfig
from keras_bert3.data.pairing_config import PairingConfig
from keras_bert3.data.old_keywords import takes_old_keywords
from keras_bert3.data.pairing_config import raise_problems
from keras_bert3.data.setting_fields import flat_fields
from keras_bert3.data.setting_fields import nested
from keras_bert3.data.setting_fields import setting
from keras_bert3.distribution.strategy import STRATEGIES
from keras_bert3.renamed import warn_renamed
from keras_bert3.training.finetuning_config import CHOSEN_PRECISIONS


@dataclasses.dataclass(frozen=True)
class PretrainingConfig:
    """What a pretraining run does; each field, and each field of its data configs,
    is a `keras-bert3 pretrain` flag (`--batch-size` for `batching.batch_size`).

    Example:
    >>> config = PretrainingConfig(output="runs/tiny", corpus="corpus/*.txt", steps=300,
    ...                            batching=BatchingConfig(batch_size=64, drop_remainder=True))
    >>> config.validate()
    """

    output: str = setting(None, "run directory: checkpoints, logs, plot, final preset")
    model: str = setting("tiny", "tiny, mini, small, medium, base or large", resume=True)
    preset: str | None = setting(
        None, "continue pretraining this preset (its tokenizer too) instead of a new --model", resume=True
    )
    corpus: str | list | None = setting(
        None,
        "files or glob, one sentence a line and a blank line between documents, or a prepare-data directory "
        "(read with fresh masks each pass); under a strategy each worker reads its own files; "
        "default: the embedded corpus",
        resume=True,
    )
    steps: int = setting(1000, "total training steps")
    pairing: PairingConfig = nested(PairingConfig)
    masking: MaskingConfig = nested(MaskingConfig)
    # Whole batches by default: each step takes one of the same shape.
    batching: BatchingConfig = nested(BatchingConfig, drop_remainder=True)
    learning_rate: float = setting(1e-4, "peak learning rate")
    warmup_steps: int | None = setting(None, "linear warmup steps; default: 1%% of --steps")
    checkpoint_every: int = setting(100, "steps between checkpoints and log lines", resume=True)
    vocabulary_size: int = setting(8000, "at most this many tokens learnt on the corpus (new models)", resume=True)
    precision: str | None = setting(
        None,
        "default: bfloat16 compute, float32 weights where the chip computes bfloat16 natively (GPUs of compute "
        "capability 8.0+, TPUs, CPUs with AVX512-BF16 or AMX), float16 with loss scaling on 7.x GPUs, float32 "
        "elsewhere",
        resume=True,
        choices=CHOSEN_PRECISIONS,
    )
    strategy: str = setting(
        "none",
        "mirrored / multi_worker_mirrored / tpu (TensorFlow); data_parallel / model_parallel (JAX)",
        choices=STRATEGIES,
    )
    devices: int | None = setting(None, "how many of the GPUs / TPUs (else CPUs) the strategy uses; default all")
    seed: int = setting(0, "data and initialisation seed", resume=True)
    data_service: str | None = setting(
        None,
        "a tf.data service dispatcher whose workers compute the input (keras-bert3 data-service); "
        "a resumed run then gets a fresh stream",
        metavar="HOST:PORT",
    )

    def __getattr__(self, name: str):
        """The flat settings of 2026-11-28 (`config.batch_size`), for a release."""
        if name not in OLD_ATTRIBUTES:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        part, field = OLD_ATTRIBUTES[name]
        warn_renamed(f"PretrainingConfig.{name}", f".{part}.{field}", stacklevel=2)
        return getattr(getattr(self, part), field)

    def validate(self) -> None:
        """Refuses values a run cannot use, naming the flag, before any corpus is read."""
        problems = [] if self.output else ["no --output: give the run's directory"]
        problems += [] if self.corpus else ["no --corpus: give files, a glob or a directory of prepared shards"]
        for name in ("steps", "checkpoint_every", "vocabulary_size"):
            if getattr(self, name) < 1:
                problems.append(f"{flag_of(name)} {getattr(self, name)} must be at least 1")
        pairing = self.pairing
        problems += pairing.problems() + self.batching.problems(pairing)
        problems += self.masking.problems(None if pairing.problems() else pairing)
        if not self.learning_rate > 0:
            problems.append(f"--learning-rate {self.learning_rate} must be positive")
        if self.warmup_steps is not None and not 0 <= self.warmup_steps < max(self.steps, 1):
            problems.append(f"--warmup-steps {self.warmup_steps} must be at least 0 and below --steps {self.steps}")
        raise_problems(problems)


# The flat fields of 2026-11-28: their config and field in the tree.
OLD_ATTRIBUTES = {
    "batch_size": ("batching", "batch_size"),
    "packed_length": ("batching", "packed_length"),
    "sequence_length": ("pairing", "sequence_length"),
    "nsp": ("pairing", "next_sentence_prediction"),
    "max_predictions_per_seq": ("masking", "max_predictions_per_seq"),
}
PretrainingConfig.__init__ = takes_old_keywords(PretrainingConfig.__init__)  # Their keywords too.

# Settings a resumed run must keep, the data configs' included (its stream
# resumes from epochs times `checkpoint_every`).
RESUME_FIELDS = tuple(field.name for field, _ in flat_fields(PretrainingConfig) if field.metadata["resume"])


def flag_of(name: str) -> str:
    """The command-line flag of a field: `--batch-size`; `--no-nsp` for a field that is on by default."""
    owner = next(
        c for c in (PretrainingConfig, PairingConfig, MaskingConfig, BatchingConfig) if name in c.__dataclass_fields__
    )
    return setting_fields.flag_of(owner, name, dict((f.name, d) for f, d in flat_fields(PretrainingConfig))[name])


def add_flags(parser: argparse.ArgumentParser) -> None:
    """Adds one flag per `PretrainingConfig` field to `parser`."""
    setting_fields.add_flags(parser, PretrainingConfig, required=("output",))


def from_flags(args: argparse.Namespace, **overrides) -> PretrainingConfig:
    """The config of parsed flags (`add_flags`'), with `overrides` given."""
    return setting_fields.from_flags(PretrainingConfig, args, **overrides)
