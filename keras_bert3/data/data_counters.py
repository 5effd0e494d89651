"""Counts of what the pretraining data pipeline read, skipped and made."""

import dataclasses
import logging
import threading

logger = logging.getLogger("keras_bert3.data")


@dataclasses.dataclass
class DataCounters:
    """What the pipeline saw, skipped and made; pass one in to read the counts.

    Counts accumulate over passes (each iteration of a dataset is a pass).

    Args:
        files: files opened.
        empty_files: files of 0 bytes (skipped).
        documents: documents with at least one token (used).
        empty_documents: documents whose sentences all tokenize to nothing (skipped).
        sentences: non-empty sentences used.
        empty_sentences: sentences that tokenize to nothing (skipped).
        invalid_utf8_sentences: sentences with invalid UTF-8 bytes, kept with each bad
            sequence replaced by U+FFFD (dropping them would break NSP continuations).
        truncated_sentences: sentences of more tokens than one example holds
            (a line that is a whole paragraph or file): cut to fit, their tail lost
            (a line longer than `corpus_reader.MAX_LINE_BYTES` is cut to that as it is read).
        split_documents: documents cut in two at `max_document_sentences` to bound memory.
        single_sentence_documents: documents of one sentence (they give only random-next pairs).
        shortened_documents: document visits whose target length was shortened (`short_seq_prob`).
        examples: examples made.
        random_next: examples whose second segment is from another document (label 1).
        forced_random_next: of those, the ones whose chunk was a single sentence, so
            no true continuation existed (the original makes these random too).
        dropped_for_nsp_balance: forced random-next examples left out so that
            half the examples are true continuations (`balanced_nsp`).

    Examples:

    >>> counters = DataCounters()
    >>> dataset = pretraining_dataset("corpus/*.txt", tokenizer, counters=counters)  # doctest: +SKIP
    >>> _ = list(dataset); counters.examples  # doctest: +SKIP
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
        """Logs one warning line listing what was skipped or repaired so far,
        where a kind of skip appeared since the last line (counts grow with
        every pass; a line per pass would repeat the same news).

        Example:
        >>> counters.log_skips()  # doctest: +SKIP
        Pretraining data so far: 296 sentences of invalid UTF-8 (kept, bad bytes replaced by U+FFFD) ...
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
