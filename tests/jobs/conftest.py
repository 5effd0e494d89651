"""Labelled files of real text for each task (`keras-bert3 finetune --task ...`),
and a tiny pretrained preset with MiniLM's real vocabulary, made once per test run."""

import json

import pytest

from keras_bert3_demo.docstring_code_tags import CODE_TAGS
from keras_bert3_demo.docstring_code_tags import docstring_code_tags
from keras_bert3_demo.docstring_questions import docstring_questions
from keras_bert3_demo.docstring_topics import docstring_topics
from keras_bert3_demo.labelled_sets import write_conll
from keras_bert3_demo.labelled_sets import write_csv
from keras_bert3_demo.labelled_sets import write_squad
from tests.choice_questions import choice_questions
from tests.multi_topic_texts import multi_topic_texts
from tests.tiny_preset import write_tiny_preset


@pytest.fixture(scope="session")
def task_files(tmp_path_factory, minilm_dir):
    """A tiny preset and train/validation files of each task: docstring topics
    (CSV and JSON lines), the share of a sentence's words that are code (CSV and JSON lines, for the
    regressor), texts of one or two topics (CSV, the topics split by ";", and JSON lines, lists; for the multi-label
    classifier), questions on docstrings with four answers to choose from (SWAG's CSV and JSON lines), code words tagged B-CODE/I-CODE/O (CoNLL), questions on
    docstrings (SQuAD v2.0 JSON, a few without an answer)."""
    root = tmp_path_factory.mktemp("task_files")
    write_tiny_preset(str(root / "pretrained"), minilm_dir)
    topics = docstring_topics()
    names = topics["class_names"]
    write_csv(
        root / "train.csv",
        [{"sentence": t, "topic": names[l]} for t, l in zip(topics["train_texts"][:64], topics["train_labels"][:64])],
    )
    with open(root / "validation.jsonl", "w", encoding="utf-8") as f:
        for text, label in zip(topics["test_texts"][:24], topics["test_labels"][:24]):
            f.write(json.dumps({"sentence": text, "topic": names[label]}) + "\n")
    tags = docstring_code_tags()
    as_names = lambda ids: [[CODE_TAGS[i] for i in sentence] for sentence in ids]  # noqa: E731
    write_conll(root / "train.conll", tags["train_words"][:64], as_names(tags["train_tags"][:64]))
    # And one sentence longer than a sequence: six of them run together.
    words, tag_names = tags["test_words"][:24], as_names(tags["test_tags"][:24])
    words.append([w for sentence in tags["test_words"][24:30] for w in sentence])
    tag_names.append([t for sentence in as_names(tags["test_tags"][24:30]) for t in sentence])
    write_conll(root / "validation.conll", words, tag_names)
    shares = lambda sentences: [sum(t > 0 for t in tags) / len(tags) for tags in sentences]  # noqa: E731
    write_csv(  # The regressor's: the share of a sentence's words that are code.
        root / "scores_train.csv",
        [
            {"sentence": " ".join(w), "code_share": f"{s:.4f}"}
            for w, s in zip(tags["train_words"][:128], shares(tags["train_tags"][:128]))
        ],
    )
    with open(root / "scores_validation.jsonl", "w", encoding="utf-8") as f:
        for w, share in zip(tags["test_words"][:24], shares(tags["test_tags"][:24])):
            f.write(json.dumps({"sentence": " ".join(w), "code_share": round(share, 4)}) + "\n")
    texts, topic_lists = multi_topic_texts("train", 64)  # The multi-label classifier's: labels split by ";".
    write_csv(root / "topics_train.csv", [{"sentence": t, "topics": ";".join(n)} for t, n in zip(texts, topic_lists)])
    with open(root / "topics_validation.jsonl", "w", encoding="utf-8") as f:  # And as JSON lists.
        for text, names in zip(*multi_topic_texts("test", 24)):
            f.write(json.dumps({"sentence": text, "topics": names}) + "\n")
    swag = [  # The multiple-choice task's: SWAG's CSV columns, and JSON lines.
        {"sent1": e["context"], "sent2": e["question"], **{f"ending{i}": c for i, c in enumerate(e["choices"])}}
        | {"label": e["label"]}
        for e in choice_questions("train", 32)
    ]
    write_csv(root / "choices_train.csv", swag)
    with open(root / "choices_validation.jsonl", "w", encoding="utf-8") as f:
        for example in choice_questions("test", 24):
            f.write(json.dumps(example) + "\n")
    questions = docstring_questions()
    train = {k: v[:48] for k, v in questions["train"].items()}
    validation = {k: v[:16] for k, v in questions["test"].items()}
    write_squad(root / "train.json", train, unanswerable=4)
    write_squad(root / "validation.json", validation, unanswerable=3)
    return root
