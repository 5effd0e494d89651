"""Pretrain a small BERT with MLM + NSP on the embedded corpus, in plain Keras.

The same run as `keras-bert3 pretrain`, written out with the library's parts
so that each step can be changed: learn a WordPiece vocabulary, stream
pretraining examples from raw text, build the model, compile the BERT recipe,
`fit`. Run from the repository root:

    KERAS_BACKEND=jax python examples/pretrain.py --model tiny --steps 2000 --output runs/example

(`--steps 20` finishes in well under a minute; CI runs that.)
"""

import argparse
import os

import keras

import keras_bert3
from keras_bert3.data import BatchingConfig
from keras_bert3.data import PairingConfig
from keras_bert3.data import document_dataset
from keras_bert3.data import pretraining_dataset
from keras_bert3_demo import default_corpus_path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--vocabulary-size", type=int, default=8000)
    parser.add_argument("--vocabulary", help="a vocab.txt (one token a line) to use instead of learning one")
    parser.add_argument("--output", default="runs/example")
    args = parser.parse_args()
    os.makedirs(args.output, exist_ok=True)
    keras.utils.set_random_seed(0)

    # 1. A WordPiece vocabulary learnt on the corpus (one sentence a line), or given.
    corpus = default_corpus_path()
    vocabulary = args.vocabulary or keras_bert3.learn_wordpiece_vocabulary(
        document_dataset(corpus).unbatch(), args.vocabulary_size
    )
    tokenizer = keras_bert3.BertTokenizer(vocabulary)

    # 2. Pretraining examples streamed from raw text: NSP pairs, 80/10/10 masks.
    dataset = pretraining_dataset(
        corpus,
        tokenizer,
        PairingConfig(sequence_length=args.sequence_length),
        batching=BatchingConfig(batch_size=args.batch_size),
        seed=0,
    ).repeat()

    # 3. The model and the BERT recipe (AdamW, warmup then linear decay, clipping).
    backbone = keras_bert3.BertBackbone.from_size(args.model, vocabulary_size=tokenizer.vocabulary_size())
    pretrainer = keras_bert3.BertPretrainer(backbone)
    pretrainer.compile(learning_rate=args.learning_rate, total_steps=args.steps, warmup_steps=args.steps // 10)

    # 4. Train; evaluate the same fixed batches before and after.
    probe = pretraining_dataset(
        corpus,
        tokenizer,
        PairingConfig(sequence_length=args.sequence_length),
        batching=BatchingConfig(batch_size=64),
        seed=1,
    ).take(4)
    before = pretrainer.evaluate(probe, verbose=0, return_dict=True)
    pretrainer.fit(dataset, steps_per_epoch=max(args.steps // 10, 1), epochs=min(10, args.steps), verbose=2)
    after = pretrainer.evaluate(probe, verbose=0, return_dict=True)
    for name in ("mlm_accuracy", "nsp_accuracy", "mlm_loss", "nsp_loss"):
        print(f"{name:<14} {before[name]:.4f} -> {after[name]:.4f}")

    pretrainer.save_to_preset(os.path.join(args.output, "preset"), tokenizer=tokenizer)
    print(f"Saved the pretrained model to {args.output}/preset")


if __name__ == "__main__":
    main()
