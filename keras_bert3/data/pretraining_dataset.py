"""The pretraining data entry point: raw text to batches that `BertPretrainer.fit` takes."""

import itertools
import os

import tensorflow as tf

from keras_bert3.data.data_counters import DataCounters
from keras_bert3.data.document_dataset import document_dataset
from keras_bert3.data.mlm_masker import MlmMasker
from keras_bert3.data.sentence_pairer import SentencePairer
from keras_bert3.data.tokenized_documents import tokenized_documents


def pretraining_dataset(
    files: str | os.PathLike | list | tf.data.Dataset,
    tokenizer,
    sequence_length: int = 128,
    max_predictions_per_seq: int = 20,
    batch_size: int = 32,
    seed: int = 0,
    *,
    masked_lm_prob: float = 0.15,
    short_seq_prob: float = 0.1,
    next_sentence_prediction: bool = True,
    whole_word_masking: bool = False,
    file_format: str = "sentences",
    document_buffer: int = 1000,
    reservoir_size: int = 1000,
    example_buffer: int = 4096,
    drop_remainder: bool = False,
    counters: DataCounters | None = None,
) -> tf.data.Dataset:
    """BERT pretraining batches from raw documents, streamed, with dynamic masking.

    Reproduces google-research/bert `create_pretraining_data.py`: NSP pairs as
    `SentencePairer` (label 0 = B is the true continuation, 1 = B is random, as the
    original) and 80/10/10 masks as `MlmMasker`. Unlike the original, nothing is
    held in memory but bounded buffers (documents, a reservoir of documents for
    random next segments, examples), and masks are drawn inside `tf.data` afresh on
    every pass over the dataset (dynamic masking, Liu et al. 2019). For the
    original's static masks, see `write_pretraining_shards`.

    Pipeline: files -> `document_dataset` (interleaved, shuffled documents) ->
    batched tokenization (`tokenized_documents`) -> `SentencePairer` (Python, over
    id arrays) -> example shuffle -> batch -> `MlmMasker` (TF ops, per batch).
    Deterministic for `seed`: the k-th pass over the dataset is the same for the
    same seed, and each pass has new pairs and new masks.

    Args:
        files: path, glob or list of them (see `document_dataset`), or a
            `tf.data.Dataset` of documents: tf.string `(sentences,)` tensors, or scalar
            strings with one sentence a line.
        tokenizer: a `BertTokenizer`.
        sequence_length: int. Packed length.
        max_predictions_per_seq: int. Masked positions per sequence, at most the
            sequence's maskable tokens (`sequence_length - 3`, or `- 2` without NSP).
        batch_size: int.
        seed: int.
        masked_lm_prob, whole_word_masking: see `MlmMasker`.
        short_seq_prob, next_sentence_prediction, reservoir_size: see `SentencePairer`.
            With `next_sentence_prediction=False`, y has no "nsp".
        file_format, document_buffer: see `document_dataset`.
        example_buffer: int. Examples held by the shuffle buffer.
        drop_remainder: bool. Drop the last partial batch.
        counters: optional `DataCounters`, to read what was skipped and made.

    Returns:
        `tf.data.Dataset` of `(x, y, sample_weight)`: x = {"token_ids", "segment_ids",
        "padding_mask", "mask_positions"} (int32 `(batch, seq)`, mask_positions
        `(batch, max_predictions_per_seq)`), y = {"mlm": mask_ids int32,
        "nsp": next_sentence_label int32 `(batch,)`}, sample_weight = {"mlm":
        mask_weights float32}.

    Examples:

    >>> from keras_bert3.data import default_corpus_path
    >>> tokenizer = BertTokenizer.from_preset("path/to/bert-base-uncased")  # doctest: +SKIP
    >>> dataset = pretraining_dataset(default_corpus_path(), tokenizer, batch_size=64)  # doctest: +SKIP
    >>> x, y, sample_weight = next(iter(dataset))  # doctest: +SKIP
    >>> x["token_ids"].shape, y["nsp"].shape  # doctest: +SKIP
    (TensorShape([64, 128]), TensorShape([64]))
    """
    maskable = sequence_length - (3 if next_sentence_prediction else 2)
    if max_predictions_per_seq > maskable:
        raise ValueError(
            f"max_predictions_per_seq={max_predictions_per_seq} is larger than the sequence: "
            f"sequence_length={sequence_length} leaves at most {maskable} maskable tokens."
        )
    counters = counters if counters is not None else DataCounters()
    pairer = SentencePairer(
        sequence_length=sequence_length,
        cls_token_id=tokenizer.cls_token_id,
        sep_token_id=tokenizer.sep_token_id,
        pad_token_id=tokenizer.pad_token_id,
        short_seq_prob=short_seq_prob,
        next_sentence_prediction=next_sentence_prediction,
        reservoir_size=reservoir_size,
        counters=counters,
    )
    masker = MlmMasker(
        tokenizer,
        max_predictions_per_seq=max_predictions_per_seq,
        masked_lm_prob=masked_lm_prob,
        whole_word_masking=whole_word_masking,
    )
    if isinstance(files, tf.data.Dataset):
        documents = _as_sentence_documents(files)
    else:
        documents = document_dataset(
            files, file_format=file_format, seed=seed, document_buffer=document_buffer, counters=counters
        )

    passes = itertools.count()

    def generate():
        pass_index = next(passes)
        yield from pairer.examples(tokenized_documents(documents, tokenizer, counters=counters), seed=(seed, pass_index))
        counters.log_skips()

    rows = tf.TensorSpec([None, sequence_length], tf.int32)
    examples = tf.data.Dataset.from_generator(
        generate, output_signature=(rows, rows, tf.TensorSpec([None], tf.int32), tf.TensorSpec([None], tf.int32))
    )
    batches = examples.unbatch().shuffle(example_buffer, seed=seed, reshuffle_each_iteration=True)
    batches = batches.batch(batch_size, drop_remainder=drop_remainder)
    mask_seeds = tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True).batch(2)

    def to_inputs(batch, mask_seed):
        token_ids, segment_ids, lengths, labels = batch
        padding_mask = tf.cast(tf.range(sequence_length)[None, :] < lengths[:, None], tf.int32)
        masked = masker(token_ids, padding_mask, mask_seed)
        x = {
            "token_ids": masked["token_ids"],
            "segment_ids": segment_ids,
            "padding_mask": padding_mask,
            "mask_positions": masked["mask_positions"],
        }
        y = {"mlm": masked["mask_ids"], "nsp": labels} if next_sentence_prediction else {"mlm": masked["mask_ids"]}
        return x, y, {"mlm": masked["mask_weights"]}

    dataset = tf.data.Dataset.zip(batches, mask_seeds)
    return dataset.map(to_inputs, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True).prefetch(tf.data.AUTOTUNE)


def _as_sentence_documents(documents: tf.data.Dataset) -> tf.data.Dataset:
    spec = documents.element_spec
    if not isinstance(spec, tf.TensorSpec) or spec.dtype != tf.string or spec.shape.rank not in (0, 1):
        raise ValueError(
            "A dataset of documents must yield tf.string tensors: (sentences,) or a scalar "
            f"with one sentence a line; got {spec}."
        )
    if spec.shape.rank == 0:
        return documents.map(lambda text: tf.strings.split(text, "\n"))
    return documents
