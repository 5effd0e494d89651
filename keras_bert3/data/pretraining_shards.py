"""Static masking: pretraining examples written to TFRecord shards, `dupe_factor` masked copies, in the
original's format; and a reader that gives the batches of `pretraining_dataset`."""

import logging
import os
import time

import numpy as np
import tensorflow as tf

from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.corpus_reader import expand_files
from keras_bert3.data.masking_config import MaskingConfig
from keras_bert3.data.pairing_config import PairingConfig
from keras_bert3.data.masked_batches import model_inputs
from keras_bert3.data.pretraining_dataset import pretraining_dataset
from keras_bert3.data.old_keywords import takes_old_keywords
from keras_bert3.data.without_autotune import without_autotune

LOGGER = logging.getLogger(__name__)

# Feature names of google-research/bert `create_pretraining_data.py`.
_INT_FEATURES = (
    "input_ids",
    "input_mask",
    "segment_ids",
    "masked_lm_positions",
    "masked_lm_ids",
    "next_sentence_labels",
)


@takes_old_keywords
def write_pretraining_shards(
    files,
    tokenizer,
    output_dir: str,
    pairing: PairingConfig = PairingConfig(),
    masking: MaskingConfig = MaskingConfig(),
    *,
    dupe_factor: int = 10,
    num_shards: int = 4,
    seed: int = 0,
    verbose: bool = True,
) -> list[str]:
    """Writes `dupe_factor` passes of pretraining examples, each with its own pairs and masks, to
    TFRecord shards (the original's static masking); returns their paths. The records hold the original's features
    (`input_ids`, `input_mask`, `segment_ids`, `masked_lm_positions`, `masked_lm_ids`, `masked_lm_weights`,
    `next_sentence_labels`), so its readers and `read_pretraining_shards` read them; examples go round-robin to
    `num_shards` files `pretraining-00000-of-00004.tfrecord`.

    Args:
        files, pairing, masking, seed: as `pretraining_dataset`.
        tokenizer: a `BertTokenizer`.
        output_dir: str. Created if needed.
        dupe_factor: int. Masked copies (passes) of the corpus.
        verbose: bool. Log a line per pass (INFO, the `keras_bert3` logger).

    Example:
    >>> paths = write_pretraining_shards("corpus/*.txt", tokenizer, "shards", dupe_factor=5)  # doctest: +SKIP
    """
    if dupe_factor < 1 or num_shards < 1:
        raise ValueError(f"dupe_factor and num_shards must be at least 1, got {dupe_factor} and {num_shards}.")
    dataset = pretraining_dataset(files, tokenizer, pairing, masking, BatchingConfig(batch_size=256), seed)
    tf.io.gfile.makedirs(output_dir)
    paths = [os.path.join(output_dir, f"pretraining-{i:05d}-of-{num_shards:05d}.tfrecord") for i in range(num_shards)]
    writers = [tf.io.TFRecordWriter(path) for path in paths]
    count = 0
    start = time.perf_counter()
    try:
        for dupe in range(dupe_factor):  # Each pass over the dataset has new pairs and new masks.
            pass_start, pass_count = time.perf_counter(), 0
            for x, y, sample_weight in dataset.as_numpy_iterator():
                for record in _serialize(x, y, sample_weight):
                    writers[count % num_shards].write(record)
                    count += 1
                    pass_count += 1
            if verbose:
                elapsed = time.perf_counter() - pass_start
                LOGGER.info(
                    f"write_pretraining_shards: pass {dupe + 1}/{dupe_factor}: {pass_count:,} examples in "
                    f"{elapsed:.1f} s ({pass_count / max(elapsed, 1e-9):,.0f} examples/s); {count:,} in total."
                )
    finally:
        for writer in writers:
            writer.close()
    if verbose:
        elapsed = time.perf_counter() - start
        LOGGER.info(
            f"write_pretraining_shards: {count:,} examples in {num_shards} shards, {count / elapsed:,.0f} examples/s."
        )
    return paths


def read_pretraining_shards(
    files,
    *,
    batch_size: int = 32,
    seed: int = 0,
    shuffle_buffer: int = 4096,
    next_sentence_prediction: bool = True,
    drop_remainder: bool = False,
) -> tf.data.Dataset:
    """Reads TFRecord shards of `write_pretraining_shards` (or of the original `create_pretraining_data.py`) into the
    `(x, y, sample_weight)` batches of `pretraining_dataset`; a `ValueError` where they hold no example.

    Args:
        files: a path, glob or list of them.
        seed: int. Seeds the shard order and the example shuffle.
        shuffle_buffer: int. Examples held by the shuffle buffer.
        next_sentence_prediction: bool. Include y["nsp"].

    Example:
    >>> dataset = read_pretraining_shards("shards/*.tfrecord", batch_size=32)  # doctest: +SKIP
    """
    paths = expand_files(files)
    first = next(iter(tf.data.TFRecordDataset(paths)), None)
    if first is None:
        raise ValueError(f"The {len(paths)} shards matching {files} hold no example.")
    example = tf.train.Example.FromString(first.numpy()).features.feature
    sequence_length = len(example["input_ids"].int64_list.value)
    max_predictions = len(example["masked_lm_positions"].int64_list.value)
    features = {
        name: tf.io.FixedLenFeature([max_predictions if name.startswith("masked_lm") else sequence_length], tf.int64)
        for name in _INT_FEATURES
    }
    features["next_sentence_labels"] = tf.io.FixedLenFeature([1], tf.int64)
    features["masked_lm_weights"] = tf.io.FixedLenFeature([max_predictions], tf.float32)

    @tf.autograph.experimental.do_not_convert  # Traced as written, as `paired_examples`.
    def to_inputs(records):
        parsed = tf.io.parse_example(records, features)
        ints = {name: tf.cast(parsed[name], tf.int32) for name in _INT_FEATURES}
        return model_inputs(
            ints["input_ids"],
            ints["segment_ids"],
            ints["input_mask"],
            ints["masked_lm_positions"],
            ints["masked_lm_ids"],
            parsed["masked_lm_weights"],
            ints["next_sentence_labels"][:, 0] if next_sentence_prediction else None,
        )

    dataset = tf.data.Dataset.from_tensor_slices(paths).shuffle(len(paths), seed=seed)
    dataset = dataset.interleave(tf.data.TFRecordDataset, cycle_length=min(4, len(paths)))
    dataset = dataset.shuffle(shuffle_buffer, seed=seed).batch(batch_size, drop_remainder=drop_remainder)
    return without_autotune(dataset.map(to_inputs, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE))


def _serialize(x: dict, y: dict, sample_weight: dict):
    """Yields one serialized `tf.train.Example` per row of a batch."""
    columns = {
        "input_ids": x["token_ids"],
        "input_mask": x["padding_mask"],
        "segment_ids": x["segment_ids"],
        "masked_lm_positions": x["mask_positions"],
        "masked_lm_ids": y["mlm"],
        "next_sentence_labels": y["nsp"][:, None] if "nsp" in y else np.zeros((len(y["mlm"]), 1), np.int32),
    }
    weights = sample_weight["mlm"]
    for i in range(len(weights)):
        feature = {
            name: tf.train.Feature(int64_list=tf.train.Int64List(value=values[i])) for name, values in columns.items()
        }
        feature["masked_lm_weights"] = tf.train.Feature(float_list=tf.train.FloatList(value=weights[i]))
        yield tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
