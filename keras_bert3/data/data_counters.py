"""Counts of what the pretraining data pipeline read, skipped and made."""

import dataclasses
import logging
import threading

logger = logging.getLogger("keras_bert3.data")


@dataclasses.dataclass
class DataCounters:
    """What the pipeline read, skipped and made, summed over passes; pass one in to read the counts.

    Args:
        files, empty_files: files opened; of those, files of 0 bytes (skipped).
        documents, empty_documents: documents with a token (used); documents with none (skipped).
        sentences, empty_sentences: sentences with a token (used); sentences with none (skipped).
        invalid_utf8_sentences: sentences with invalid UTF-8, kept with U+FFFD (dropping them would break NSP).
        truncated_sentences: sentences longer than an example holds, cut to fit (a line longer than
            `corpus_reader.MAX_LINE_BYTES` is cut to that as it is read).
        split_documents: documents cut at `max_document_sentences` to bound memory.
        single_sentence_documents: documents of one sentence (they give only random-next pairs).
        shortened_documents: document visits with a shortened target length (`short_seq_prob`).
        examples, random_next: examples made; of those, with a second segment from another document (label 1).
        forced_random_next: of those, the ones of a single-sentence chunk (no true continuation).
        dropped_for_nsp_balance: forced random-next examples left out for 50% true pairs (`balanced_nsp`).

    Example:
    >>> counters = DataCounters()
    >>> dataset = pretraining_dataset("corpus/*.txt", tokenizer, counters=counters)  # doctest: +SKIP
    """

    files: int = 0
    empty_files: int = 0
    documents: int = 0
    empty_documents: int = 0
    sentences: int = 0
    empty_sentences: int = 0
    invalid_utf8_sentences: int = 0
    truncated_sentences: int = 0
    split_documents: int = 0
    single_sentence_documents: int = 0
    shortened_documents: int = 0
    examples: int = 0
    random_next: int = 0
    forced_random_next: int = 0
    dropped_for_nsp_balance: int = 0
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock, repr=False, compare=False)
    _kinds_logged: set = dataclasses.field(default_factory=set, repr=False, compare=False)

    def add(self, **counts) -> None:
        """Adds to the named counts (from the pipeline's worker threads too).

        Example:
        >>> counters.add(examples=256, random_next=128)
        """
        with self._lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + int(value))

    def log_skips(self) -> None:
        """Logs a warning listing what was skipped or repaired so far, where a kind of skip is new.

        Example:
        >>> counters.log_skips()  # doctest: +SKIP
        """
        skipped = {name: getattr(self, name) for name in SKIPS if getattr(self, name)}
        with self._lock:
            if not skipped or set(skipped) <= self._kinds_logged:
                return
            self._kinds_logged = set(skipped)
        listed = ", ".join(f"{count:,} {SKIPS[name]}" for name, count in skipped.items())
        logger.warning(
            "Pretraining data so far: %s; %s documents and %s sentences used.",
            listed,
            f"{self.documents:,}",
            f"{self.sentences:,}",
        )


SKIPS = {  # What each skip count means, for `log_skips`.
    "empty_files": "empty files (skipped)",
    "empty_documents": "documents with no token (skipped)",
    "empty_sentences": "sentences with no token (skipped)",
    "invalid_utf8_sentences": "sentences of invalid UTF-8 (kept, bad bytes replaced by U+FFFD)",
    "truncated_sentences": "sentences longer than an example holds (cut to fit: one sentence a line?)",
    "split_documents": "documents cut in two at max_document_sentences",
}
