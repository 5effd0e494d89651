"""Tagged sentences from a CoNLL or JSON-lines file, each problem named with its file and line."""

import dataclasses
import json

from keras_bert3.preprocessing.labelled_files import check_distinct_labels
from keras_bert3.preprocessing.labelled_files import decoded_lines
from keras_bert3.preprocessing.labelled_files import json_lines


@dataclasses.dataclass
class TaggedSentences:
    """Sentences as word lists, their tags (one a word), and the line each starts on."""

    words: list[list[str]]
    tags: list[list[str]]
    lines: list[int]


def read_tagged_file(path: str, tag_column: int = -1) -> TaggedSentences:
    """The sentences of a CoNLL file (a word and its tags per line, blank lines between sentences, the tag in column
    `tag_column`) or of a JSON-lines file (lists `tokens`, `tags`). `ValueError` names the file and line of: no
    sentence, a missing tag column, a bad JSON line, tags that differ only by case or spaces."""
    reader = _json_sentences if path.endswith((".jsonl", ".json")) else _conll_sentences
    sentences = TaggedSentences([], [], [])
    for line, words, tags in reader(path, tag_column):
        sentences.words.append(words)
        sentences.tags.append(tags)
        sentences.lines.append(line)
    if not sentences.words:
        raise ValueError(f"{path} has no sentences (a word and its tag per line, a blank line between sentences).")
    check_distinct_labels([tag for tags in sentences.tags for tag in tags], path)
    return sentences


def _conll_sentences(path: str, tag_column: int):
    words, tags, start = [], [], None
    width = None  # (columns, line) of the file's first word line: every word line has as many.
    for line, text in decoded_lines(path):
        columns = text.split()
        if not columns or columns[0] == "-DOCSTART-":
            if words:
                yield start, words, tags
            words, tags = [], []
            continue
        if not -len(columns) <= tag_column < len(columns) or tag_column % len(columns) == 0:  # Column 0: the word.
            raise ValueError(
                f"{path}, line {line}: {text.strip()[:60]!r} has no tag in column {tag_column} (a word, then its "
                "tags, split at whitespace). Fix the line, or give the tag's column with --tag-column."
            )
        width = width or (len(columns), line)
        if len(columns) != width[0]:
            raise ValueError(
                f"{path}, line {line}: {text.strip()[:60]!r} has {len(columns)} columns, line {width[1]} has "
                f"{width[0]}: a column counted from the end would be another one here. Give every word line the same "
                "columns (a word holding a space splits in two)."
            )
        start = start if words else line
        words.append(columns[0])
        tags.append(columns[tag_column])
    if words:
        yield start, words, tags


def _json_sentences(path: str, tag_column: int):
    for line, row in json_lines(path):
        words, tags = row.get("tokens"), row.get("tags")
        if not (isinstance(words, list) and isinstance(tags, list) and len(words) == len(tags) and words):
            raise ValueError(
                f"{path}, line {line}: a JSON object with lists `tokens` and `tags` of one length is needed, "
                f"got {json.dumps(row)[:60]!r}."
            )
        words = [str(word) for word in words]
        if any(not word or any(character.isspace() for character in word) for word in words):
            raise ValueError(
                f"{path}, line {line}: a token is empty or holds a space, which a served model (it splits text at "
                "spaces) would read as another number of words. Split it into tokens."
            )
        yield line, words, [str(tag) for tag in tags]
