"""How a corpus is cut into NSP pairs: the settings of `DocumentGroupPairer` and its groups (`PairingConfig`)."""

import dataclasses

from keras_bert3.data.setting_fields import flag_of
from keras_bert3.data.setting_fields import setting

FILE_FORMATS = ("sentences", "paragraphs")


@dataclasses.dataclass(frozen=True)
class PairingConfig:
    """The pairs a corpus makes (google-research/bert `create_instances_from_document`, see
    `DocumentGroupPairer`); each field is a `keras-bert3 prepare-data` flag whose help says what it means.

    Example:
    >>> pairing = PairingConfig(sequence_length=512, pairing_group=1024)
    >>> pairing.validate()
    """

    sequence_length: int = setting(128, "tokens of a pair", resume=True)
    next_sentence_prediction: bool = setting(
        True, "MLM only: single segments, no next-sentence prediction", resume=True, flag="--no-nsp"
    )
    short_seq_prob: float = setting(0.1, "probability of a document's pairs being shorter, at a random length")
    balanced_nsp: bool = setting(
        True, "the original's coin flip instead of 50%% true continuations", flag="--original-nsp"
    )
    pairing_group: int = setting(256, "documents paired together: random next segments come from the group's others")
    file_format: str = setting(
        "sentences",
        "sentences: one a line, a blank line between documents; paragraphs: split into sentences here",
        choices=FILE_FORMATS,
    )

    @property
    def maskable_tokens(self) -> int:
        """Tokens of a pair that are neither [CLS] nor [SEP]."""
        return self.sequence_length - (3 if self.next_sentence_prediction else 2)

    def pairer_settings(self) -> dict:
        """The keyword arguments of `DocumentGroupPairer` (besides the special ids)."""
        return dict(
            sequence_length=self.sequence_length,
            short_seq_prob=self.short_seq_prob,
            next_sentence_prediction=self.next_sentence_prediction,
            balanced_nsp=self.balanced_nsp,
        )

    def problems(self) -> list[str]:
        """What a pipeline cannot use, each naming its flag."""
        problems = []
        if self.sequence_length < 5:
            problems.append(f"--sequence-length {self.sequence_length} must be at least 5 ([CLS] a [SEP] b [SEP])")
        if not 0 <= self.short_seq_prob <= 1:
            problems.append(f"{flag_of(PairingConfig, 'short_seq_prob')} {self.short_seq_prob} must be in [0, 1]")
        if self.pairing_group < 2:
            problems.append(f"--pairing-group {self.pairing_group} must be at least 2 (random next segments)")
        if self.file_format not in FILE_FORMATS:
            problems.append(f"--file-format {self.file_format!r} must be one of {', '.join(FILE_FORMATS)}")
        return problems

    def validate(self) -> None:
        """Refuses settings no pipeline can use: one `ValueError` naming their flags."""
        raise_problems(self.problems())


def raise_problems(problems: list[str]) -> None:
    """One ValueError for all of `problems`, if any."""
    if problems:
        raise ValueError("; ".join(problems) + ".")
