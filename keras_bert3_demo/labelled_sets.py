"""The embedded labelled sets as the files `keras-bert3 finetune` reads: the
docstring topics as CSV, the code words of the docs' sentences as CoNLL, the
questions on docstrings as SQuAD JSON (`keras-bert3 labelled-sets`)."""

import csv
import json
import os

from keras_bert3_demo.docstring_code_tags import CODE_TAGS
from keras_bert3_demo.docstring_code_tags import docstring_code_tags
from keras_bert3_demo.docstring_questions import docstring_questions
from keras_bert3_demo.docstring_topics import docstring_topics


def write_labelled_sets(output: str) -> list[str]:
    """Writes `topics/{train,test}.csv` (columns text, label),
    `code_tags/{train,test}.conll` and `questions/{train,test}.json` (SQuAD
    v1.1) under `output`; returns their paths.

    Example:
    >>> write_labelled_sets("data")  # Then: keras-bert3 finetune --task token-classifier --train data/code_tags/train.conll ...
    """
    topics, tags, questions = docstring_topics(), docstring_code_tags(), docstring_questions()
    paths = []
    for split in ("train", "test"):
        labels = [topics["class_names"][label] for label in topics[f"{split}_labels"]]
        rows = [{"text": text, "label": label} for text, label in zip(topics[f"{split}_texts"], labels)]
        names = [[CODE_TAGS[i] for i in sentence] for sentence in tags[f"{split}_tags"]]
        paths += [
            write_csv(os.path.join(output, "topics", f"{split}.csv"), rows),
            write_conll(os.path.join(output, "code_tags", f"{split}.conll"), tags[f"{split}_words"], names),
            write_squad(os.path.join(output, "questions", f"{split}.json"), questions[split]),
        ]
    return paths


def write_csv(path: str, rows: list[dict]) -> str:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_conll(path: str, words: list[list[str]], tags: list[list[str]]) -> str:
    """CoNLL-2003's layout: a document start line, then a word, two other columns and its tag per line."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("-DOCSTART- -X- -X- O\n\n")
        for sentence, sentence_tags in zip(words, tags):
            f.writelines(f"{word} X _ {tag}\n" for word, tag in zip(sentence, sentence_tags))
            f.write("\n")
    return path


def other_passage(contexts: list[str], i: int) -> int:
    """The index of the next example (after `i`, wrapping around) whose passage is not example `i`'s: questions
    about one passage come in a row, so that the next example's passage may be the same."""
    count = len(contexts)
    return next((j % count for j in range(i + 1, i + count) if contexts[j % count] != contexts[i]), i)


def write_squad(path: str, examples: dict, *, unanswerable: int = 0) -> str:
    """SQuAD JSON, a paragraph per example (a dict of lists question, context,
    answer_text, answer_start). With `unanswerable`, v2.0: the last such
    questions are asked of the next other passage, without an answer."""
    paragraphs = []
    count = len(examples["question"])
    for i in range(count):
        impossible = i >= count - unanswerable
        context = examples["context"][other_passage(examples["context"], i) if impossible else i]
        answer = {"text": examples["answer_text"][i], "answer_start": examples["answer_start"][i]}
        qa = {"id": f"q{i}", "question": examples["question"][i], "answers": [] if impossible else [answer]}
        paragraphs.append({"context": context, "qas": [qa | ({"is_impossible": True} if impossible else {})]})
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(
            {"version": "v2.0" if unanswerable else "1.1", "data": [{"title": "docstrings", "paragraphs": paragraphs}]},
            f,
        )
    return path
