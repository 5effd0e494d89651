"""Batches of SQuAD-style examples, windowed and labelled with the answer's start and end tokens."""

import numpy as np
import tensorflow as tf

from keras_bert3.preprocessing.task_preprocessor import trim_to_longest
from keras_bert3.preprocessing.text_inputs import python_texts
from keras_bert3.data.without_autotune import without_autotune

SQUAD_FIELDS = ("question", "context", "answer_text", "answer_start")


def squad_examples(x) -> dict[str, list]:
    """SQuAD-style examples (a dict of lists or a list of dicts) checked, as a dict of lists;
    `ValueError` names the example when an answer is not at its `answer_start`."""
    if isinstance(x, (list, tuple)) and x and isinstance(x[0], dict):
        x = {field: [example.get(field) for example in x] for field in SQUAD_FIELDS}
    if not isinstance(x, dict) or any(field not in x for field in SQUAD_FIELDS):
        found = sorted(x) if isinstance(x, dict) else type(x).__name__
        raise ValueError(
            f"Question answering examples are a dict of lists with keys {list(SQUAD_FIELDS)} "
            f"(or a list of dicts with them); got {found}."
        )
    columns = {
        field: list(np.asarray(x[field]).tolist()) if isinstance(x[field], np.ndarray) else list(x[field])
        for field in SQUAD_FIELDS
    }
    lengths = {field: len(values) for field, values in columns.items()}
    if len(set(lengths.values())) != 1:
        raise ValueError(f"The example fields have different lengths: {lengths}. Give one value per example.")
    check_questions_and_contexts(columns["question"], columns["context"])
    for i, (context, text, start) in enumerate(
        zip(columns["context"], columns["answer_text"], columns["answer_start"])
    ):
        if text == "" and start == -1:  # No answer (SQuAD v2.0): labelled [CLS] in every window.
            continue
        if not isinstance(text, str) or not text.strip():
            raise ValueError(
                f'Example {i}: answer_text {text!r} is empty. Give its answer, or answer_text "" and '
                "answer_start -1 for a question the context does not answer (SQuAD v2.0)."
            )
        if not isinstance(start, (int, np.integer)) or context[start : start + len(text)] != text:
            found = context[start : start + len(text)] if isinstance(start, (int, np.integer)) else None
            raise ValueError(
                f"Example {i}: answer_start={start!r} does not point at answer_text {text!r} in its context "
                f"(the context has {found!r} there). answer_start is the index of the answer's first "
                "character in the context (a Python str index)."
            )
    return columns


def check_questions_and_contexts(questions, contexts, *, allow_empty: bool = False) -> tuple[list[str], list[str]]:
    """Lists of strings of the same length, none empty (unless `allow_empty`: answered ""); else a ValueError
    saying which."""
    if contexts is None:
        raise ValueError("predict takes questions and their contexts: qa.predict((questions, contexts)).")
    questions, contexts = python_texts(questions, decode=True), python_texts(contexts, decode=True)
    questions = [questions] if isinstance(questions, str) else list(questions)
    contexts = [contexts] if isinstance(contexts, str) else list(contexts)
    if len(questions) != len(contexts):
        raise ValueError(f"{len(questions)} questions but {len(contexts)} contexts: give one context per question.")
    for name, texts in (("question", questions), ("context", contexts)):
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise ValueError(f"{name} {i} is a {type(text).__name__}, not a string.")
            if not text.strip() and not allow_empty:
                raise ValueError(f"{name} {i} is empty: every example needs a {name} with some text.")
    return questions, contexts


def question_answering_dataset(
    x, *, preprocessor, batch_size: int = 32, shuffle: bool = False, seed: int | None = None
) -> tf.data.Dataset:
    """Batches `(inputs, labels)` of SQuAD-style examples for `BertQuestionAnswerer`.

    A window's labels are the answer's start and end tokens, or [CLS] (0) when
    it does not hold the answer. Batches are padded to their longest window.

    Args:
        x: a dict of lists `question`, `context`, `answer_text`, `answer_start`
            (the answer's first character in the context), or a list of such dicts.
        preprocessor: a `QuestionAnsweringPreprocessor`.
        batch_size: int. Windows per batch.

    Returns:
        `(model_inputs, labels)`: int32 `(batch, length)` inputs, and int32
        `(batch,)` `start_logits` and `end_logits` token positions.

    Example:
    ```python
    qa.fit(question_answering_dataset(examples, preprocessor=qa.preprocessor, shuffle=True), epochs=2)
    ```
    """
    examples = squad_examples(x)
    features = preprocessor((examples["question"], examples["context"]))
    starts = np.array(examples["answer_start"], "int32")  # Characters (Python str indices); -1: no answer.
    ends = starts + np.array([len(text) for text in examples["answer_text"]], "int32")
    start_positions, end_positions = preprocessor.labels(features, starts, ends)
    inputs = preprocessor.model_inputs(features)
    labels = {"start_logits": start_positions, "end_logits": end_positions}
    dataset = tf.data.Dataset.from_tensor_slices((inputs, labels))
    if shuffle:
        dataset = dataset.shuffle(len(start_positions), seed=seed, reshuffle_each_iteration=True)
    multiple = preprocessor.pad_to_multiple_of
    dataset = dataset.batch(batch_size).map(lambda inputs, labels: (trim_to_longest(inputs, multiple), labels))
    return without_autotune(dataset.prefetch(2))
