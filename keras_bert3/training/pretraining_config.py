"""What a pretraining run does, in one place: `PretrainingConfig`'s fields are
the `keras-bert3 pretrain` flags (name, type, default, help), and the fields a
resumed run must keep (`RESUME_FIELDS`) are marked on them. The command builds
its flags from the fields (`add_flags`) and the config from its flags
(`from_flags`); `validate` refuses values a run cannot use, naming the flag."""

import argparse
import dataclasses
import types
import typing

from keras_bert3.distribution.strategy import STRATEGIES

PRECISIONS = ("float32", "mixed_bfloat16", "mixed_float16")


def setting(default, help: str, *, resume: bool = False, choices=None, metavar: str | None = None):
    """A config field: its default, its flag's help (argparse's: `%%` for %)
    and whether a resumed run must keep it."""
    metadata = {"help": help, "resume": resume, "choices": choices, "metavar": metavar}
    return dataclasses.field(default=default, metadata=metadata)


@dataclasses.dataclass(frozen=True)
class PretrainingConfig:
    """What a pretraining run does; each field is a `keras-bert3 pretrain`
    flag (`--batch-size` for `batch_size`; `--no-nsp` for `nsp`), whose help
    says what it means.

    Example:
    >>> config = PretrainingConfig(output="runs/tiny", corpus="corpus/*.txt", steps=300)
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
    batch_size: int = setting(32, "global batch size (rows, with --packed-length)", resume=True)
    sequence_length: int = setting(128, "tokens of a pair", resume=True)
    max_predictions_per_seq: int = setting(20, "masked positions per pair", resume=True)
    nsp: bool = setting(True, "MLM only, no next-sentence prediction", resume=True)
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
        choices=PRECISIONS,
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
    packed_length: int | None = setting(
        None,
        "pack pairs (of at most --sequence-length tokens) whole into rows of TOKENS, attention and positions kept "
        "within each pair; --batch-size counts rows",
        resume=True,
        metavar="TOKENS",
    )

    def validate(self) -> None:
        """Refuses, before any corpus is read or model built, values a run
        cannot use, each with the flag it came from and what to give instead.

        Example:
        >>> PretrainingConfig(output="run", corpus="c.txt", batch_size=0).validate()  # ValueError: --batch-size 0 ...
        """
        problems = [] if self.output else ["no --output: give the run's directory"]
        problems += [] if self.corpus else ["no --corpus: give files, a glob or a directory of prepared shards"]
        for name in ("steps", "batch_size", "checkpoint_every", "vocabulary_size", "max_predictions_per_seq"):
            if getattr(self, name) < 1:
                problems.append(f"{flag_of(name)} {getattr(self, name)} must be at least 1")
        minimum = 3 + int(self.nsp)  # [CLS], a token, [SEP] (and a second segment's [SEP] with NSP).
        if self.sequence_length < minimum:
            problems.append(f"--sequence-length {self.sequence_length} must be at least {minimum}")
        elif self.max_predictions_per_seq >= self.sequence_length:
            problems.append(
                f"--max-predictions-per-seq {self.max_predictions_per_seq} must be below "
                f"--sequence-length {self.sequence_length} (BERT masks 15% of tokens: "
                f"{max(1, round(0.15 * self.sequence_length))} here)"
            )
        if self.packed_length is not None and self.packed_length < self.sequence_length:
            problems.append(
                f"--packed-length {self.packed_length} must be at least --sequence-length "
                f"{self.sequence_length} (a pair is never split across rows)"
            )
        if not self.learning_rate > 0:
            problems.append(f"--learning-rate {self.learning_rate} must be positive")
        if self.warmup_steps is not None and not 0 <= self.warmup_steps < max(self.steps, 1):
            problems.append(f"--warmup-steps {self.warmup_steps} must be at least 0 and below --steps {self.steps}")
        if problems:
            raise ValueError("; ".join(problems) + ".")


# Fields a resumed run must keep (a checkpoint's epochs count steps of
# `checkpoint_every`: the data stream resumes from their product).
RESUME_FIELDS = tuple(field.name for field in dataclasses.fields(PretrainingConfig) if field.metadata["resume"])


def flag_of(name: str) -> str:
    """The command-line flag of a field: `--batch-size`; `--no-nsp` for a
    field that is on by default."""
    field = next(f for f in dataclasses.fields(PretrainingConfig) if f.name == name)
    dashed = name.replace("_", "-")
    return f"--no-{dashed}" if field.default is True else f"--{dashed}"


def add_flags(parser: argparse.ArgumentParser) -> None:
    """Adds one flag per `PretrainingConfig` field to `parser`."""
    for field in dataclasses.fields(PretrainingConfig):
        options = {"dest": field.name, "help": field.metadata["help"]}
        if field.default is True:
            parser.add_argument(flag_of(field.name), action="store_false", **options)
            continue
        kind = _flag_type(field.type)
        options.update(type=kind, default=field.default, required=field.name == "output")
        if field.metadata["choices"]:
            options["choices"] = field.metadata["choices"]
        if field.metadata["metavar"]:
            options["metavar"] = field.metadata["metavar"]
        parser.add_argument(flag_of(field.name), **options)


def from_flags(args: argparse.Namespace, **overrides) -> PretrainingConfig:
    """The config of parsed flags (`add_flags`'), with `overrides` given."""
    values = {field.name: getattr(args, field.name) for field in dataclasses.fields(PretrainingConfig)}
    return PretrainingConfig(**{**values, **overrides})


def _flag_type(annotation):
    """The argparse type of a field's annotation: `int | None` -> int."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        kinds = [a for a in typing.get_args(annotation) if a is not type(None) and a is not list]
        return kinds[0]
    return annotation
