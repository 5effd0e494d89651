"""How pairs are masked for MLM: the settings of `MlmMasker`, written once (`MaskingConfig`)."""

import dataclasses

from keras_bert3.data.pairing_config import PairingConfig
from keras_bert3.data.pairing_config import raise_problems
from keras_bert3.data.setting_fields import setting


@dataclasses.dataclass(frozen=True)
class MaskingConfig:
    """The masks of a pair, drawn afresh every pass (`MlmMasker`: each chosen token becomes [MASK] with
    probability 0.8, a random token with 0.1, or stays itself, google-research/bert's rule).

    Example:
    >>> masking = MaskingConfig(max_predictions_per_seq=80, whole_word_masking=True)
    >>> masking.validate(PairingConfig(sequence_length=512))
    """

    max_predictions_per_seq: int = setting(20, "masked positions per pair", resume=True)
    masked_lm_prob: float = setting(0.15, "fraction of a pair's tokens masked (at most --max-predictions-per-seq)")
    whole_word_masking: bool = setting(False, "mask every piece of a chosen word")

    def masker_settings(self) -> dict:
        """The keyword arguments of `MlmMasker` (besides the tokenizer)."""
        return dataclasses.asdict(self)

    def problems(self, pairing: PairingConfig | None = None) -> list[str]:
        """What a pipeline cannot use, each naming its flag; with `pairing`, also masks its pairs cannot hold."""
        problems = []
        if self.max_predictions_per_seq < 1:
            problems.append(f"--max-predictions-per-seq {self.max_predictions_per_seq} must be at least 1")
        elif pairing is not None and self.max_predictions_per_seq > pairing.maskable_tokens:
            problems.append(
                f"--max-predictions-per-seq {self.max_predictions_per_seq} is larger than the sequence: "
                f"--sequence-length {pairing.sequence_length} leaves at most {pairing.maskable_tokens} maskable "
                f"tokens (BERT masks 15% of tokens: {max(1, round(0.15 * pairing.sequence_length))} here)"
            )
        if not 0 < self.masked_lm_prob <= 1:
            problems.append(f"--masked-lm-prob {self.masked_lm_prob} must be in (0, 1]")
        return problems

    def validate(self, pairing: PairingConfig | None = None) -> None:
        """Refuses settings no pipeline (or none of `pairing`'s pairs) can use: a `ValueError` naming their flags."""
        raise_problems(self.problems(pairing))
