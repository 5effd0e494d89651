"""The token classifier's and the question answerer's training files (CoNLL,
JSON lines, SQuAD JSON) as `keras-bert3 finetune` reads them, and their bad
input, each named with the file and the line or question."""

import json
import re

import pytest

from keras_bert3.preprocessing.squad_files import read_squad_file
from keras_bert3.preprocessing.tagged_files import read_tagged_file

pytestmark = pytest.mark.backend_free  # Files and Python only.


def test_conll_sentences_with_documents_and_columns(tmp_path):
    path = tmp_path / "train.conll"
    path.write_text("-DOCSTART- -X- -X- O\n\nEU NNP B-NP B-ORG\nrejects VBZ B-VP O\n\nPeter NNP B-NP B-PER\n", "utf-8")
    sentences = read_tagged_file(str(path))
    assert sentences.words == [["EU", "rejects"], ["Peter"]] and sentences.tags == [["B-ORG", "O"], ["B-PER"]]
    assert sentences.lines == [3, 6]
    assert read_tagged_file(str(path), tag_column=2).tags == [["B-NP", "B-VP"], ["B-NP"]]  # Chunk tags.


def test_json_lines_sentences(tmp_path):
    path = tmp_path / "train.jsonl"
    path.write_text(json.dumps({"tokens": ["Call", "os.walk"], "tags": ["O", "B-CODE"]}) + "\n\n", "utf-8")
    assert read_tagged_file(str(path)).tags == [["O", "B-CODE"]]


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("a.conll", "EU B-ORG\nrejects\n", r"a.conll, line 2: 'rejects' has no tag in column -1"),
        ("b.conll", "\n\n", r"b.conll has no sentences"),
        ("c.jsonl", '{"tokens": ["a", "b"], "tags": ["O"]}\n', r"c.jsonl, line 1: a JSON object with lists"),
        (
            "d.jsonl",
            '{"tokens": ["New York"], "tags": ["B-LOC"]}\n',
            r"d.jsonl, line 1: a token is empty or holds a space",
        ),
        ("e.jsonl", "{not json\n", r"e.jsonl, line 1: not valid JSON"),
        ("f.conll", "EU B-ORG\nrejects b-org\n", r"f.conll has labels that differ only by case"),
        # Messy file: a line with a column more (its chunk tag, say) read "the last column" as another tag.
        (
            "g.conll",
            "EU NNP B-NP B-ORG\nrejects VBZ B-VP O\nGerman JJ B-NP I-NP B-MISC\n",
            r"g.conll, line 3: 'German JJ B-NP I-NP B-MISC' has 5 columns, line 1 has 4",
        ),
    ],
)
def test_bad_tagged_files_are_named_with_their_line(tmp_path, name, text, message):
    (tmp_path / name).write_text(text, "utf-8")
    with pytest.raises(ValueError, match=message):
        read_tagged_file(str(tmp_path / name))


def test_a_conll_file_that_is_not_utf8_names_the_byte(tmp_path):
    (tmp_path / "latin.conll").write_bytes("Müller B-PER\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin.conll, line 1, column 2: byte 0xfc is not UTF-8"):
        read_tagged_file(str(tmp_path / "latin.conll"))


def squad(paragraphs) -> dict:
    return {"version": "v2.0", "data": [{"title": "t", "paragraphs": paragraphs}]}


def test_squad_v1_and_v2_questions(tmp_path):
    context = "Guido van Rossum wrote Python."
    qas = [
        {"id": "a", "question": "Who wrote it?", "answers": [{"text": "Guido van Rossum", "answer_start": 0}] * 2},
        {"id": "b", "question": "When?", "answers": [], "is_impossible": True},
    ]
    (tmp_path / "squad.json").write_text(json.dumps(squad([{"context": context, "qas": qas}])), "utf-8")
    questions = read_squad_file(str(tmp_path / "squad.json"))
    assert questions.id == ["a", "b"] and questions.answers == [["Guido van Rossum"] * 2, []]
    examples, left_out = questions.training_examples()  # The question without an answer: "" at -1 ([CLS]).
    assert examples["answer_text"] == ["Guido van Rossum", ""] and examples["answer_start"] == [0, -1]
    assert left_out == 0 and questions.unanswerable == 1


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"data": [1 2]}', r"is not SQuAD JSON \(line 1: Expecting"),
        (json.dumps({"data": [{"paragraphs": [{"qas": []}]}]}), r"data\[0\].paragraphs\[0\]: no str `context`"),
        (
            json.dumps(
                squad(
                    [
                        {
                            "context": "abc",
                            "qas": [{"id": "x", "question": "Q?", "answers": [{"text": "b", "answer_start": 0}]}],
                        }
                    ]
                )
            ),
            r"data\[0\].paragraphs\[0\].qas\[0\] \(id 'x'\): the answer 'b' is not at answer_start 0",
        ),
        (
            json.dumps(squad([{"context": "abc", "qas": [{"id": "y", "question": " ", "answers": []}]}])),
            r"\(id 'y'\): the question or its context is empty",
        ),
    ],
)
def test_bad_squad_files_name_the_question(tmp_path, content, message):
    (tmp_path / "bad.json").write_text(content, "utf-8")
    with pytest.raises(ValueError, match=message):
        read_squad_file(str(tmp_path / "bad.json"))


def one_question(answers) -> str:
    qa = {"id": "q7", "question": "What does it return?", "answers": answers}
    return json.dumps(squad([{"context": "It returns the path.", "qas": [qa]}]))


def test_messy_file_a_converters_empty_answer_is_unanswerable(tmp_path):
    """SQuAD v2.0 as converters write it: an unanswerable question with the answer `{"text": "",
    "answer_start": -1}`, beside an answerable one."""
    path = tmp_path / "converted.json"
    path.write_text(one_question([{"text": "", "answer_start": -1}]), "utf-8")
    assert read_squad_file(str(path)).answers == [[]]
    path.write_text(one_question([{"text": "the path", "answer_start": 11}]), "utf-8")
    assert read_squad_file(str(path)).answer_starts == [[11]]


@pytest.mark.parametrize(
    "answer",
    [
        {"text": "path", "answer_start": -5},  # Python's slicing counts from the end: it was read as no answer.
        {"text": "", "answer_start": 3},
        {"text": "It", "answer_start": False},
    ],
)
def test_messy_file_a_negative_or_empty_answer_is_named(tmp_path, answer):
    path = tmp_path / "bad.json"
    path.write_text(one_question([answer]), "utf-8")
    expected = f"{path}, data[0].paragraphs[0].qas[0] (id 'q7'): the answer {answer['text']!r} is not at answer_start"
    with pytest.raises(ValueError, match=re.escape(expected)):
        read_squad_file(str(path))
