"""What `keras-bert3 finetune` does, in one place: `FinetuningConfig`'s
fields are its flags (name, type, default, help), as `PretrainingConfig`'s
are `pretrain`'s (`data/setting_fields.py`)."""

import dataclasses

from keras_bert3.data.setting_fields import setting
from keras_bert3.models.training_precision import PRECISIONS

# The precisions a command may ask for; without one, `compile` picks ("auto").
CHOSEN_PRECISIONS = tuple(precision for precision in PRECISIONS if precision != "auto")

# The flags a fine-tuning must be given.
REQUIRED = ("preset", "train", "text_column", "label_column", "output")


@dataclasses.dataclass(frozen=True)
class FinetuningConfig:
    """A classifier fine-tuned on a labelled file; each field is a
    `keras-bert3 finetune` flag (`--text-column` for `text_column`).

    Example:
    >>> FinetuningConfig(preset="runs/main/pretraining/preset", train="train.csv", text_column="text",
    ...                  label_column="label", output="my_classifier", epochs=5)
    """

    preset: str = setting(None, "the pretrained preset (any BertBackbone.from_preset source)")
    train: str = setting(None, ".csv or .jsonl file")
    validation: str | None = setting(None, ".csv or .jsonl file with the same columns")
    text_column: str = setting(None, "the column of the texts")
    second_column: str | None = setting(None, "the column of the second texts of sentence pairs")
    label_column: str = setting(None, "the column of the labels (any strings: the classes are the distinct ones)")
    output: str = setting(None, "the fine-tuned preset directory")
    epochs: int = setting(3, "passes over the training file")
    batch_size: int = setting(32, "texts a step")
    learning_rate: float = setting(5e-5, "peak learning rate (AdamW, warmup then linear decay)")
    sequence_length: int = setting(128, "tokens a text (or pair) is cut to")
    precision: str | None = setting(
        None,
        "default: as compile's 'auto'; mixed_bfloat16: bfloat16 compute, float32 weights (CPUs with AMX or "
        "AVX512-BF16, GPUs, TPUs); mixed_float16: float16 with loss scaling (GPUs)",
        choices=CHOSEN_PRECISIONS,
    )
    seed: int = setting(0, "initialisation and shuffling seed")
    verbose: int = setting(2, "0 silent, 1 progress bar, 2 a line per epoch")
