"""What `keras-bert3 finetune` does: `FinetuningConfig`'s fields are its flags (name, type,
default, help), as `PretrainingConfig`'s are `pretrain`'s (`data/setting_fields.py`)."""

import dataclasses

from keras_bert3.data.setting_fields import flag_of
from keras_bert3.data.setting_fields import setting
from keras_bert3.distribution.strategy import STRATEGIES
from keras_bert3.models.built_in_tasks import BUILT_IN_TASKS
from keras_bert3.optimizers.linear_warmup_decay import SCHEDULES
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
    preset: str = setting(
        None, "the pretrained preset (any BertBackbone.from_preset source)", aliases=("--model_name_or_path",)
    )
    train: str = setting(
        None,
        "classifier, regressor, multi-label-classifier: .csv or .jsonl; token-classifier: CoNLL (a word and its tags "
        "a line, a blank line between sentences) or .jsonl with lists tokens and tags; question-answerer: SQuAD v1.1 "
        "or v2.0 .json; multiple-choice: SWAG's .csv or .jsonl of context, choices and label",
        aliases=("--train_file",),
    )
    validation: str | None = setting(
        None, "a file like --train's, scored after each epoch (or --eval-steps)", aliases=("--validation_file",)
    )
    text_column: str | None = setting(
        None,
        "classifier: the column of the texts; predict --input: of the texts (of the questions)",
        aliases=("--text_column_name",),
    )
    second_column: str | None = setting(
        None, "the column of the second texts of sentence pairs (predict --input: of the contexts)"
    )
    label_column: str | None = setting(
        None,
        "the column of the labels: classifier, any strings (the classes are the distinct ones); regressor, numbers; "
        "multi-label-classifier, a JSON list of a text's labels, or text split by --label-separator",
        aliases=("--label_column_name",),
    )
    label_separator: str = setting(";", "multi-label-classifier: the character between a text's labels in a CSV cell")
    tag_column: int = setting(-1, "token-classifier, CoNLL: the column of the tags (0 is the word; default: the last)")
    output: str = setting(
        None,
        "the fine-tuned preset directory (its checkpoints: OUTPUT.checkpoints until done)",
        aliases=("--output_dir",),
    )
    epochs: int = setting(3, "passes over the training file", aliases=("--num_train_epochs",))
    batch_size: int = setting(32, "texts a step", aliases=("--per_device_train_batch_size",))
    learning_rate: float = setting(5e-5, "peak learning rate (AdamW, warmup then --schedule)")
    weight_decay: float = setting(0.01, "AdamW's decoupled weight decay (not on LayerNorm or biases)")
    warmup_ratio: float = setting(0.1, "the part of the optimizer steps the learning rate rises over from 0")
    warmup_steps: int | None = setting(None, "optimizer steps of warmup, instead of --warmup-ratio")
    schedule: str = setting(
        "linear",
        "the learning rate after warmup, to the last step",
        choices=SCHEDULES,
        aliases=("--lr_scheduler_type",),
    )
    gradient_accumulation_steps: int = setting(
        1, "batches whose gradients are averaged into each optimizer step (a step of --batch-size times this)"
    )
    max_steps: int | None = setting(
        None, "optimizer steps to train, instead of --epochs' (the last pass may end early)"
    )
    label_smoothing: float = setting(
        0.0,
        "classes' targets (1 - this) on the true one plus this spread over all (classifier, token-classifier, "
        "question-answerer, multiple-choice; multi-label-classifier: toward 0.5)",
        aliases=("--label_smoothing_factor",),
    )
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
    doc_stride: int | None = setting(
        None, "question-answerer: passage tokens consecutive windows share; default: a third of --sequence-length"
    )
    max_query_length: int | None = setting(
        None, "question-answerer: a question's tokens kept; default: a sixth of --sequence-length"
    )
    max_answer_length: int = setting(15, "question-answerer: tokens an answer spans at most")
    n_best: int | None = setting(
        None,
        "question-answerer: spans start and end among a window's N likeliest tokens (Hugging Face run_qa.py's 20); "
        "default: every span is scored",
        aliases=("--n_best_size",),
    )
    metric_for_best: str | None = setting(
        None,
        "the validation report's figure that chooses the best weights and stops early (accuracy, f1, ...; see "
        "evaluate's report); default: the task's own (accuracy, entity f1, f1, pearson, micro_f1)",
        aliases=("--metric_for_best_model",),
    )
    eval_steps: int | None = setting(
        None, "score --validation every N optimizer steps, not each epoch's end (a checkpoint each time too)"
    )
    patience: int | None = setting(
        None,
        "stop after this many validation scores without a better one; keep the best's weights",
        aliases=("--early_stopping_patience",),
    )
    save_steps: int | None = setting(None, "a checkpoint every N optimizer steps too, besides each epoch's end")
    keep_checkpoints: int | None = setting(
        None,
        "keep the newest K checkpoints (and the best weights) in OUTPUT.checkpoints after the run; default: "
        "the newest only, removed once the preset is written",
        aliases=("--save_total_limit",),
    )
    strategy: str = setting(
        "none",
        "mirrored (TensorFlow) or data_parallel (JAX): each batch split over --devices",
        choices=STRATEGIES,
    )
    devices: int | None = setting(None, "how many of the GPUs / TPUs (else CPUs) the strategy uses; default all")
    search: bool = setting(
        False,
        "fine-tune once per combination of the --search-* values (default: the paper's grid, batch 16 and 32, learning "
        "rate 5e-5, 3e-5 and 2e-5, 2 to 4 epochs) and keep the best on --validation by --metric-for-best "
        "(KerasTuner's GridSearch; trials in OUTPUT.search)",
    )
    search_learning_rates: str | None = setting(None, "--search: learning rates, comma-separated", metavar="LIST")
    search_batch_sizes: str | None = setting(None, "--search: batch sizes, comma-separated", metavar="LIST")
    search_epochs: str | None = setting(None, "--search: epochs, comma-separated", metavar="LIST")
    search_seeds: str | None = setting(
        None, "--search: seeds, comma-separated (restarts); default: --seed", metavar="LIST"
    )
    seed: int = setting(0, "initialisation and shuffling seed")
    verbose: int = setting(2, "0 silent, 1 progress bar, 2 a line per epoch")

    def __post_init__(self):
        for name in ("epochs", "batch_size", "sequence_length", "gradient_accumulation_steps", "max_answer_length"):
            refuse_below_one(getattr(self, name), flag_of(FinetuningConfig, name))
        for name in ("max_steps", "eval_steps", "save_steps", "keep_checkpoints", "n_best", "max_query_length"):
            if getattr(self, name) is not None:
                refuse_below_one(getattr(self, name), flag_of(FinetuningConfig, name))
        for name in ("doc_stride", "warmup_steps"):
            if getattr(self, name) is not None and getattr(self, name) < 0:
                raise ValueError(f"{flag_of(FinetuningConfig, name)} {getattr(self, name)}: give 0 or more.")
        for name in ("warmup_ratio", "label_smoothing"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ValueError(
                    f"{flag_of(FinetuningConfig, name)} {getattr(self, name)}: give at least 0 and below 1."
                )
        if self.weight_decay < 0:
            raise ValueError(f"--weight-decay {self.weight_decay}: give 0 or more.")


def refuse_below_one(value: int, flag: str) -> None:
    """A count a command needs at least one of (epochs, texts a step or a call): 0 or less is refused, naming
    the flag, instead of read as "the default" or "everything at once"."""
    if value < 1:
        raise ValueError(f"{flag} {value}: give a whole number of at least 1.")
