"""Labelled texts from a CSV or JSON-lines file, each problem named with its file and line."""

import csv
import json
import math
import os
import sys
import unicodedata

from keras_bert3.preprocessing.text_limit import cut_text

LONGEST_FIELD = min(sys.maxsize, 2**31 - 1)  # A CSV field's characters: as many as the platform's C long holds.


LABEL_KINDS = ("class", "number", "classes")  # What a row's label is: a class name, a number, a list of class names.


def read_labelled_file(
    path: str,
    text_column: str,
    label_column: str,
    second_column: str | None = None,
    *,
    label_kind: str = "class",
    label_separator: str = ";",
    numeric_labels: bool | None = None,
):
    """`(texts, second_texts or None, labels)` of a `.csv` or `.jsonl`/`.json` file. `label_kind`: "class", a
    class name (str) a row; "number", a float a row (a regressor's targets); "classes", a list of class names a row
    (a multi-label classifier's: a JSON list, or text split at `label_separator`; empty where a text has none).

    Texts are cut at `text_limit.MAX_TEXT_CHARACTERS`. `ValueError` names the file and line of: no rows, a missing column, an empty text or label,
    a line that is not a JSON object, labels that differ only by case or spaces, a numeric label that is not a
    finite number."""
    if numeric_labels is not None:  # The keyword before `label_kind`: kept for a release.
        import warnings

        warnings.warn(
            "read_labelled_file(numeric_labels=...) is deprecated and will be removed in the next release: use "
            'label_kind="number" (or "class").',
            DeprecationWarning,
            stacklevel=2,
        )
        label_kind = "number" if numeric_labels else label_kind
    columns = [name for name in (text_column, second_column, label_column) if name is not None]
    rows = list(file_rows(path))  # (line, row)
    if not rows:
        raise ValueError(f"{path} has no rows.")
    first = rows[0][1]
    for column in columns:
        if column not in first:
            raise ValueError(f"{path} has no column {column!r}; its columns are {sorted(first)}: name one of them.")
    needed = [c for c in columns if c != label_column or label_kind != "classes"]  # A text may have no label.
    for line, row in rows:
        for column in needed:
            value = row.get(column)
            if value is None or (isinstance(value, str) and not value.strip()):
                kind = "label" if column == label_column else "text"
                raise ValueError(
                    f"{path}, line {line}: the {kind} ({column!r}) is missing or empty. Fill it in or remove the row."
                )
    if label_kind == "number":
        labels = number_labels(rows, label_column, path)
    elif label_kind == "classes":
        labels = label_lists(rows, label_column, label_separator, path)
        check_distinct_labels([name for names in labels for name in names], path)
    else:
        check_label_types(rows, label_column, path)
        labels = [str(row[label_column]) for _, row in rows]
        check_distinct_labels(labels, path)
    texts = [cut_text(str(row[text_column])) for _, row in rows]
    seconds = None if second_column is None else [cut_text(str(row[second_column])) for _, row in rows]
    return texts, seconds, labels


def file_rows(path: str):
    """`(line number, dict)` per data row; non-UTF-8 is refused naming its first bad byte. A byte-order mark
    at the start (Excel's "CSV UTF-8") is skipped."""
    try:
        yield from _decoded_rows(path)
    except UnicodeDecodeError:
        raise ValueError(_not_utf8(path)) from None


def decoded_lines(path: str):
    """`(line number, text without its line break)` per line of a UTF-8 file (a leading byte-order mark skipped)."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            for line, text in enumerate(f, start=1):
                text = text.rstrip("\r\n")  # The line read is let go before the next: one copy of a long line.
                yield line, text
    except UnicodeDecodeError:
        raise ValueError(_not_utf8(path)) from None


def _not_utf8(path: str) -> str:
    """Where the first byte that is not UTF-8 is, as a line and column of the file."""
    with open(path, "rb") as f:
        for line, raw in enumerate(f, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as error:
                byte = raw[error.start]
                column = len(raw[: error.start].decode("utf-8")) + 1
                return (
                    f"{path}, line {line}, column {column}: byte 0x{byte:02x} is not UTF-8 (is the file in Latin-1 "
                    f"or Windows-1252?). Save it as UTF-8 (e.g. `iconv -f latin1 -t utf-8 {path} > utf8-{os.path.basename(path)}`)."
                )
    return f"{path} is not UTF-8 text. Save it as UTF-8."


def _decoded_rows(path: str):
    if path.endswith((".jsonl", ".json")):
        yield from json_lines(path)
        return
    csv.field_size_limit(LONGEST_FIELD)  # Python's default, 131,072 characters, is shorter than many documents.
    with open(path, encoding="utf-8-sig", newline="") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        twice = sorted({name for name in header if header.count(name) > 1})
        if twice:
            raise ValueError(
                f"{path}, line 1: the header names the column {twice[0]!r} {header.count(twice[0])} times. "
                "Rename the columns so that each name is one column."
            )
        for row in reader:
            if None in row:  # More fields than the header names: DictReader keeps them under None.
                raise ValueError(
                    f"{path}, line {reader.line_num}: {len(header) + len(row[None])} fields, the header names "
                    f'{len(header)}. Quote a field that holds a comma ("a, b"), as spreadsheets save them.'
                )
            yield reader.line_num, row


def json_lines(path: str):
    """`(line number, dict)` per non-blank line; a line that is not a JSON object is refused."""
    for line, text in decoded_lines(path):
        if not text.strip():
            continue
        try:
            row = json.loads(text)
        except json.JSONDecodeError as error:
            reason = error.msg.removesuffix(" at")  # "Invalid control character at": json's wording.
            raise ValueError(f"{path}, line {line}: not valid JSON at column {error.colno} ({reason}).") from None
        if not isinstance(row, dict):
            raise ValueError(
                f"{path}, line {line}: a JSON object {{...}} per line is needed, got {type(row).__name__}."
            )
        text = None  # Not held beside the row while the caller uses it (a long line would be twice in memory).
        yield line, row


def check_label_types(rows, label_column: str, path: str) -> None:
    """Refuses JSON labels that are not class names (true, 1.0, a list) and labels written both as strings and
    as numbers (`1` and `"1"`), naming the line: as text they would be classes of their own."""
    first_kind = {}
    for line, row in rows:
        label = row[label_column]
        if isinstance(label, bool) or not isinstance(label, (str, int)):
            raise ValueError(
                f"{path}, line {line}: the label {json.dumps(label)} is not a class name. Write each label as a "
                'string ("positive") or a whole number (1).'
            )
        kind = "a string" if isinstance(label, str) else "a number"
        first_kind.setdefault(kind, (line, label))
        if len(first_kind) > 1:
            (line_a, a), (line_b, b) = first_kind.values()
            raise ValueError(
                f"{path}, line {line_b}: the label {json.dumps(b)} is {kind}, line {line_a}'s {json.dumps(a)} is not: "
                "write every label the same way (all strings, or all whole numbers)."
            )


def label_lists(rows, label_column: str, separator: str, path: str) -> list[list[str]]:
    """Each row's class names: a JSON list of strings or whole numbers, or text split at `separator` (each name
    stripped, empty ones left out); anything else refused naming its line."""
    lists = []
    for line, row in rows:
        label = row.get(label_column)
        if isinstance(label, str) or label is None:
            names = [name.strip() for name in (label or "").split(separator)]
        elif isinstance(label, list) and all(isinstance(n, (str, int)) and not isinstance(n, bool) for n in label):
            names = [str(name).strip() for name in label]
        else:
            raise ValueError(
                f"{path}, line {line}: the labels {json.dumps(label)} are not a list of class names. Write them as a "
                f'JSON list (["sports", "politics"]) or as text split by {separator!r} ("sports{separator}politics").'
            )
        lists.append(list(dict.fromkeys(name for name in names if name)))
    return lists


def number_labels(rows, label_column: str, path: str) -> list[float]:
    """The labels as floats: JSON numbers, or text that reads as a number ("0.8", "4", "1e-3"); anything else, and
    NaN or infinity, refused naming its line."""
    numbers = []
    for line, row in rows:
        label = row[label_column]
        try:
            number = float(label) if isinstance(label, (str, int, float)) and not isinstance(label, bool) else None
        except ValueError:
            number = None
        if number is None or not math.isfinite(number):
            raise ValueError(
                f"{path}, line {line}: the label {json.dumps(label)} is not a number, and a regressor learns numbers. "
                "Write a number there (0.8, 4, 1e-3) or remove the row (or check --label-column)."
            )
        numbers.append(number)
    return numbers


def _folded(label: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", label).casefold().split())


def check_distinct_labels(labels: list[str], path: str) -> None:
    """Refuses labels that differ only by case or spaces, naming each group."""
    groups = {}
    for label in dict.fromkeys(labels):
        groups.setdefault(_folded(label), []).append(label)
    clashes = [names for names in groups.values() if len(names) > 1]
    if clashes:
        shown = "; ".join(", ".join(repr(name) for name in names) for names in clashes[:5])
        raise ValueError(
            f"{path} has labels that differ only by case or spaces: {shown}. Write each class one way in the "
            "file (they would become separate classes)."
        )
