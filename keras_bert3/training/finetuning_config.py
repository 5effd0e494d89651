"""What `keras-bert3 finetune` does: `FinetuningConfig`'s fields are its flags (name, type,
default, help), as `PretrainingConfig`'s are `pretrain`'s (`data/setting_fields.py`)."""

import dataclasses

from keras_bert3.data.setting_fields import flag_of
from keras_bert3.data.setting_fields import setting
from keras_bert3.models.built_in_tasks import BUILT_IN_TASKS
from keras_bert3.models.training_precision import PRECISIONS

# The precisions a command may ask for; without one, `compile` picks ("auto").
CHOSEN_PRECISIONS = tuple(precision for precision in PRECISIONS if precision != "auto")

# keras_bert3's own `--task` names (the old constant; `keras_bert3.jobs.task_registry` finds every task).
TASKS = tuple(BUILT_IN_TASKS)

# The flags a fine-tuning must be given (a classifier's columns too: `ClassifierJob` asks for them).
REQUIRED = ("preset", "train", "output")


@dataclasses.dataclass(frozen=True)
class FinetuningConfig:
    """A task fine-tuned on a labelled file; each field is a `keras-bert3 finetune`
    flag, and the column fields are `evaluate`'s and `predict`'s too."""

    task: str = setting(
        "classifier",
        f"what to fine-tune: {', '.join(BUILT_IN_TASKS)}, a task an installed package registers, or module:Class of your own",
    )
    preset: str = setting(None, "the pretrained preset (any BertBackbone.from_preset source)")
    train: str = setting(
        None,
        "classifier, regressor, multi-label-classifier: .csv or .jsonl; token-classifier: CoNLL (a word and its tags "
        "a line, a blank line between sentences) or .jsonl with lists tokens and tags; question-answerer: SQuAD v1.1 "
        "or v2.0 .json; multiple-choice: SWAG's .csv or .jsonl of context, choices and label",
    )
    validation: str | None = setting(None, "a file like --train's; early stopping watches it")
    text_column: str | None = setting(
        None, "classifier: the column of the texts; predict --input: of the texts (of the questions)"
    )
    second_column: str | None = setting(
        None, "the column of the second texts of sentence pairs (predict --input: of the contexts)"
    )
    label_column: str | None = setting(
        None,
        "the column of the labels: classifier, any strings (the classes are the distinct ones); regressor, numbers; "
        "multi-label-classifier, a JSON list of a text's labels, or text split by --label-separator",
    )
    label_separator: str = setting(";", "multi-label-classifier: the character between a text's labels in a CSV cell")
    tag_column: int = setting(-1, "token-classifier, CoNLL: the column of the tags (0 is the word; default: the last)")
    output: str = setting(None, "the fine-tuned preset directory (its checkpoints: OUTPUT.checkpoints until done)")
    epochs: int = setting(3, "passes over the training file", aliases=("--num_train_epochs",))
    batch_size: int = setting(32, "texts a step", aliases=("--per_device_train_batch_size",))
    learning_rate: float = setting(5e-5, "peak learning rate (AdamW, warmup then linear decay)")
    sequence_length: int = setting(
        128,
        aliases=("--max_seq_length",),
        help="tokens a text (or pair, or window of a passage) is cut to; question-answerer: questions cut at a sixth, windows overlapping by a third",
    )
    precision: str | None = setting(
        None,
        "default: as compile's 'auto'; mixed_bfloat16: bfloat16 compute, float32 weights (CPUs with AMX or "
        "AVX512-BF16, GPUs, TPUs); mixed_float16: float16 with loss scaling (GPUs)",
        choices=CHOSEN_PRECISIONS,
    )
    patience: int | None = setting(
        None, "stop after this many epochs without a better validation score; keep the best epoch's weights"
    )
    seed: int = setting(0, "initialisation and shuffling seed")
    verbose: int = setting(2, "0 silent, 1 progress bar, 2 a line per epoch")

    def __post_init__(self):
        for name in ("epochs", "batch_size", "sequence_length"):
            refuse_below_one(getattr(self, name), flag_of(FinetuningConfig, name))


def refuse_below_one(value: int, flag: str) -> None:
    """A count a command needs at least one of (epochs, texts a step or a call): 0 or less is refused, naming
    the flag, instead of read as "the default" or "everything at once"."""
    if value < 1:
        raise ValueError(f"{flag} {value}: give a whole number of at least 1.")
