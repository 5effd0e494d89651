"""`read_labelled_file`: real labelled sentences from CSV and JSON-lines files,
and each kind of bad row refused with its file and line."""

import json
import re

import pytest

from keras_bert3.preprocessing.labelled_files import read_labelled_file
from keras_bert3_demo.docstring_topics import docstring_topics

pytestmark = pytest.mark.backend_free  # TensorFlow and tf-text only: no Keras backend reaches it.


@pytest.fixture(scope="module")
def sentences():
    data = docstring_topics()
    return [
        (text, data["class_names"][label]) for text, label in zip(data["train_texts"][:20], data["train_labels"][:20])
    ]


def write_csv(path, rows, header="sentence,topic"):
    import csv

    with open(path, "w", newline="", encoding="utf-8") as f:
        f.write(header + "\n")
        writer = csv.writer(f)
        for row in rows:
            writer.writerow(row)
    return str(path)


def write_jsonl(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return str(path)


def test_rows_are_read_in_order(tmp_path, sentences):
    texts, seconds, labels = read_labelled_file(write_csv(tmp_path / "a.csv", sentences), "sentence", "topic")
    assert texts == [s for s, _ in sentences] and labels == [t for _, t in sentences] and seconds is None
    path = write_jsonl(tmp_path / "a.jsonl", [json.dumps({"sentence": s, "topic": t}) for s, t in sentences])
    assert read_labelled_file(path, "sentence", "topic") == (texts, None, labels)


def test_missing_texts_and_labels_are_refused_with_their_line(tmp_path, sentences):
    rows = sentences[:3] + [(sentences[3][0], "")] + sentences[4:]
    with pytest.raises(ValueError, match=r"b\.csv, line 5: the label \('topic'\) is missing or empty"):
        read_labelled_file(write_csv(tmp_path / "b.csv", rows), "sentence", "topic")
    short = write_csv(tmp_path / "c.csv", sentences[:2] + [(sentences[2][0],)])  # A row without its label field.
    with pytest.raises(ValueError, match=r"c\.csv, line 4: the label \('topic'\) is missing or empty"):
        read_labelled_file(short, "sentence", "topic")
    lines = [json.dumps({"sentence": s, "topic": t}) for s, t in sentences[:2]] + [json.dumps({"sentence": "no label"})]
    with pytest.raises(ValueError, match=r"d\.jsonl, line 3: the label \('topic'\) is missing or empty"):
        read_labelled_file(write_jsonl(tmp_path / "d.jsonl", lines), "sentence", "topic")
    lines = [json.dumps({"sentence": s, "topic": t}) for s, t in sentences[:2]] + [
        json.dumps({"sentence": " ", "topic": "x"})
    ]
    with pytest.raises(ValueError, match=r"e\.jsonl, line 3: the text \('sentence'\) is missing or empty"):
        read_labelled_file(write_jsonl(tmp_path / "e.jsonl", lines), "sentence", "topic")


def test_bad_json_is_refused_with_its_line(tmp_path, sentences):
    lines = [json.dumps({"sentence": s, "topic": t}) for s, t in sentences[:3]] + ['{"sentence": "cut off', "[1, 2]"]
    with pytest.raises(ValueError, match=r"f\.jsonl, line 4: not valid JSON at column 14 \(Unterminated string"):
        read_labelled_file(write_jsonl(tmp_path / "f.jsonl", lines), "sentence", "topic")
    with pytest.raises(ValueError, match=r"g\.jsonl, line 4: a JSON object \{\.\.\.\} per line is needed, got list"):
        read_labelled_file(write_jsonl(tmp_path / "g.jsonl", lines[:3] + ["[1, 2]"]), "sentence", "topic")


def test_labels_that_differ_only_by_case_or_spaces_are_refused(tmp_path, sentences):
    rows = [(text, label) for (text, _), label in zip(sentences, ["pos", " pos", "Pos", "POS", "neg", "neg"] * 4)]
    with pytest.raises(
        ValueError, match=r"differ only by case or spaces: 'pos', ' pos', 'Pos', 'POS'\. Write each class"
    ):
        read_labelled_file(write_csv(tmp_path / "h.csv", rows), "sentence", "topic")


def test_messy_file_excels_byte_order_mark_is_skipped(tmp_path, sentences):
    """Excel's "CSV UTF-8" starts the file with a byte-order mark and ends lines with CRLF; the header's first
    column is still `sentence` (not `\\ufeffsentence`), and a JSON-lines file saved with a mark reads too."""
    import csv

    path = tmp_path / "excel.csv"
    with open(path, "w", newline="", encoding="utf-8-sig") as f:
        writer = csv.writer(f, dialect="excel")  # CRLF line ends, as Excel writes.
        writer.writerow(["sentence", "topic"])
        writer.writerows(sentences)
    assert path.read_bytes().startswith(b"\xef\xbb\xbfsentence,topic\r\n")
    texts, _, labels = read_labelled_file(str(path), "sentence", "topic")
    assert list(zip(texts, labels)) == sentences

    lines = [json.dumps({"sentence": text, "topic": label}) for text, label in sentences]
    marked = tmp_path / "marked.jsonl"
    marked.write_text("\ufeff" + "\n".join(lines) + "\n", encoding="utf-8")
    texts, _, labels = read_labelled_file(str(marked), "sentence", "topic")
    assert list(zip(texts, labels)) == sentences


def test_messy_file_an_unquoted_comma_is_named_not_cut(tmp_path, sentences):
    """A row whose text holds an unquoted comma has a field more than the header: it was cut at the comma,
    its tail read as the label and the real label dropped."""
    path = tmp_path / "hand.csv"
    lines = ["sentence,topic"] + [f'"{text}",{label}' for text, label in sentences[:3]] + ["Return a, b and c,math"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = f"{path}, line 5: 3 fields, the header names 2. Quote a field that holds a comma"
    with pytest.raises(ValueError, match=re.escape(expected)):
        read_labelled_file(str(path), "sentence", "topic")


def test_messy_file_a_column_named_twice_is_named(tmp_path, sentences):
    path = write_csv(
        tmp_path / "twice.csv", [(text, label, text) for text, label in sentences], "sentence,topic,sentence"
    )
    with pytest.raises(ValueError, match=re.escape(f"{path}, line 1: the header names the column 'sentence' 2 times")):
        read_labelled_file(path, "sentence", "topic")


@pytest.mark.parametrize(
    "labels, line, message",
    [
        (["1", 1], 2, 'the label 1 is a number, line 1\'s "1" is not'),
        ([0, 1, True], 3, "the label true is not a class name"),
        ([0, 1.0], 2, "the label 1.0 is not a class name"),
    ],
)
def test_messy_file_json_labels_of_mixed_types_are_named(tmp_path, sentences, labels, line, message):
    """JSON-lines labels `1`, `1.0`, `"1"` and `true` were each a class of its own (their text)."""
    rows = [json.dumps({"sentence": text, "topic": label}) for (text, _), label in zip(sentences, labels)]
    path = write_jsonl(tmp_path / "mixed.jsonl", rows)
    with pytest.raises(ValueError, match=re.escape(f"{path}, line {line}: {message}")):
        read_labelled_file(path, "sentence", "topic")
    numbers = write_jsonl(tmp_path / "numbers.jsonl", [json.dumps({"sentence": "a b", "topic": n}) for n in (0, 1, 0)])
    assert read_labelled_file(numbers, "sentence", "topic")[2] == ["0", "1", "0"]


def test_messy_file_a_cell_longer_than_pythons_csv_limit_is_read(tmp_path, sentences):
    """A long document in one CSV cell (over Python's default 131,072 characters, here half a million of real
    sentences, quoted, with line breaks) ended in `_csv.Error: field larger than field limit`; now it is read whole."""
    document = ""
    while len(document) < 500_000:
        document += " ".join(text for text, _ in sentences) + "\n"
    rows = [(sentences[0][0], sentences[0][1]), (document, sentences[1][1]), (sentences[2][0], sentences[2][1])]
    write_csv(tmp_path / "long.csv", rows)
    texts, _, labels = read_labelled_file(str(tmp_path / "long.csv"), "sentence", "topic")
    assert texts == [row[0] for row in rows] and labels == [row[1] for row in rows]


def test_messy_file_a_text_longer_than_any_model_reads_is_cut_as_it_is_read(tmp_path, sentences):
    """A 200 MB row was kept whole and tokenized whole before being cut to the sequence (finetune peaked at
    19.8 GB). Texts are now cut as they are read at the characters no model reads past; a tagged sentence keeps
    the words within them."""
    from keras_bert3.preprocessing.text_limit import MAX_TEXT_CHARACTERS
    from keras_bert3.preprocessing.text_limit import words_within

    document = ""
    while len(document) <= MAX_TEXT_CHARACTERS + 10_000:
        document += " ".join(text for text, _ in sentences) + " "
    path = tmp_path / "long.jsonl"
    path.write_text("".join(json.dumps({"sentence": t, "topic": l}) + "\n" for t, l in [sentences[0], (document, "x")]))
    texts, _, labels = read_labelled_file(str(path), "sentence", "topic")
    assert texts == [sentences[0][0], document[:MAX_TEXT_CHARACTERS]] and labels == [sentences[0][1], "x"]
    words = document.split()
    kept = words_within(words)
    assert len(" ".join(words[:kept])) <= MAX_TEXT_CHARACTERS < len(" ".join(words[: kept + 1]))
    assert words_within(words[:10]) == 10
