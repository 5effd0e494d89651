"""How masked pairs are batched: shuffled, `batch_size` a batch or packed into rows (`BatchingConfig`)."""

import dataclasses

from keras_bert3.data.pairing_config import PairingConfig
from keras_bert3.data.pairing_config import raise_problems
from keras_bert3.data.setting_fields import setting


@dataclasses.dataclass(frozen=True)
class BatchingConfig:
    """The batches a pipeline ends with (`training_batches`).

    Example:
    >>> batching = BatchingConfig(batch_size=256, packed_length=512)
    >>> batching.validate(PairingConfig(sequence_length=128))
    """

    batch_size: int = setting(32, "global batch size (rows, with --packed-length)", resume=True)
    packed_length: int | None = setting(
        None,
        "pack pairs (of at most --sequence-length tokens) whole into rows of TOKENS, attention and positions kept "
        "within each pair; --batch-size counts rows",
        resume=True,
        metavar="TOKENS",
    )
    drop_remainder: bool = setting(False, "drop the last partial batch of a pass")
    shuffle_buffer: int = setting(4096, "examples held by the shuffle buffer")

    def problems(self, pairing: PairingConfig | None = None) -> list[str]:
        """What a pipeline cannot use, each naming its flag; with `pairing`, also rows too short for its pairs."""
        problems = [] if self.batch_size >= 1 else [f"--batch-size {self.batch_size} must be at least 1"]
        if self.shuffle_buffer < 1:
            problems.append(f"--shuffle-buffer {self.shuffle_buffer} must be at least 1")
        if pairing is not None and self.packed_length is not None and self.packed_length < pairing.sequence_length:
            problems.append(
                f"--packed-length {self.packed_length} must be at least --sequence-length "
                f"{pairing.sequence_length} (a pair is never split across rows)"
            )
        return problems

    def validate(self, pairing: PairingConfig | None = None) -> None:
        """Refuses settings no pipeline (or none of `pairing`'s pairs) can use: a `ValueError` naming their flags."""
        raise_problems(self.problems(pairing))
