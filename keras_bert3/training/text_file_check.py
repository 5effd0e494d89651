"""Refuses corpus files that are not text (a program, an archive, an image) before anything trains on them: the pipeline
repairs invalid UTF-8 sentence by sentence, so a binary file would otherwise train without a word."""

import codecs

import tensorflow as tf

SAMPLE_BYTES = 256 * 1024  # Read from the start of each file checked.
MAX_FILES = 64  # Files checked, spread over the sorted list.
MOSTLY = 0.5  # A file with more than this share of lines not text is refused.


def check_text_files(paths: list[str]) -> None:
    """Raises ValueError naming the files (of a sample of `paths`) whose lines are mostly not text."""
    step = max(1, -(-len(paths) // MAX_FILES))
    problems = [(path, problem) for path in paths[::step] if (problem := text_problem(path))]
    if problems:
        named = "; ".join(f"{path} is not text: {problem}" for path, problem in problems[:3])
        more = f" (and {len(problems) - 3} more files)" if len(problems) > 3 else ""
        raise ValueError(
            f"{named}{more}. A corpus is UTF-8 text, one sentence a line: remove such files from the corpus."
        )


def text_problem(path: str) -> str | None:
    """None where the start of `path` reads as text (or the file is empty); else how many of its lines do not."""
    with tf.io.gfile.GFile(path, "rb") as f:
        sample = f.read(SAMPLE_BYTES)
    lines = sample.split(b"\n")
    if len(sample) == SAMPLE_BYTES:
        lines = lines[:-1] or lines  # The last line may be cut mid-character.
    lines = [line for line in lines if line.strip()]
    bad = sum(not is_text_line(line) for line in lines)
    if not lines or bad <= MOSTLY * len(lines):
        return None
    return f"{bad:,} of its first {len(lines):,} lines are not UTF-8 text (invalid UTF-8, NUL or other control bytes)"


def is_text_line(line: bytes) -> bool:
    """Valid UTF-8 without NUL bytes, and at most a tenth control characters (tabs and CRs aside)."""
    if b"\x00" in line:
        return False
    try:  # Not final: a line cut by the sample's end may end mid-character.
        text = codecs.getincrementaldecoder("utf-8")().decode(line, final=False)
    except UnicodeDecodeError:
        return False
    controls = sum(1 for character in text if ord(character) < 32 and character not in "\t\r\f\v")
    return controls * 10 <= len(text)
