"""How much of a text the task commands give a model: a text longer than any BERT reads is cut as it is read, so that
memory stays bounded whatever a row's size (a 200 MB row was tokenized whole before being cut to the sequence)."""

# No model reads past this: 512 positions, or a question answerer's 48 windows of a 384-token sequence (about 6,500
# passage tokens), at over 100 characters a token (WordPiece reads a longer word as one [UNK]). Only a text that is
# mostly spaces holds fewer tokens in as many characters.
MAX_TEXT_CHARACTERS = 1_000_000


def cut_text(text: str) -> str:
    """`text`, cut at `MAX_TEXT_CHARACTERS`."""
    return text if len(text) <= MAX_TEXT_CHARACTERS else text[:MAX_TEXT_CHARACTERS]


def words_within(words: list[str]) -> int:
    """How many of `words` (joined by spaces) fit in `MAX_TEXT_CHARACTERS`."""
    used = 0
    for count, word in enumerate(words):
        used += len(word) + 1
        if used > MAX_TEXT_CHARACTERS + 1:
            return count
    return len(words)
