"""The pretraining data entry point: raw text to batches that `BertPretrainer.fit` takes."""

import os

import tensorflow as tf

from keras_bert3.data.corpus_reader import RANGE_BYTES
from keras_bert3.data.corpus_reader import expand_files
from keras_bert3.data.corpus_reader import streaming_ranges
from keras_bert3.data.data_counters import DataCounters
from keras_bert3.data.document_group_pairer import DocumentGroupPairer
from keras_bert3.data.document_groups import corpus_groups
from keras_bert3.data import pair_packing
from keras_bert3.data.masked_batches import masked_batches
from keras_bert3.data.mlm_masker import MlmMasker
from keras_bert3.data.paired_examples import paired_examples
from keras_bert3.data.pipeline_seeds import DOCUMENT_GROUPS
from keras_bert3.data.pipeline_seeds import counted_seeds
from keras_bert3.distribution.data_service_client import served_by_data_service
from keras_bert3.distribution.worker_input import check_same_on_workers
from keras_bert3.distribution.worker_input import unsharded_by_tf_distribute


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
    balanced_nsp: bool = True,
    whole_word_masking: bool = False,
    file_format: str = "sentences",
    pairing_group: int = 256,
    example_buffer: int = 4096,
    drop_remainder: bool = False,
    range_bytes: int = RANGE_BYTES,
    counters: DataCounters | None = None,
    input_context: tf.distribute.InputContext | None = None,
    data_service: str | None = None,
    packed_length: int | None = None,
) -> tf.data.Dataset:
    """BERT pretraining batches from raw documents, streamed, with dynamic masking.

    Reproduces google-research/bert `create_pretraining_data.py` (NSP pairs as
    `DocumentGroupPairer`, 80/10/10 masks as `MlmMasker`) with bounded memory
    and masks drawn afresh on every pass (dynamic masking, Liu et al. 2019).
    The stages of `keras_bert3.data`, TensorFlow ops throughout: byte ranges
    of at most 64 MB read a few at a time -> groups -> pairs -> example shuffle
    -> batch -> masks. The k-th pass (iteration) is the same for the same seed;
    each pass has new pairs and masks; workers' shares of a pass hold its
    pairs, and the first pass those `prepare_pretraining_data` writes.

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
        short_seq_prob, next_sentence_prediction, balanced_nsp: see
            `DocumentGroupPairer`. With `next_sentence_prediction=False`, y has no "nsp".
        pairing_group: int. Documents paired together: random next segments
            come from the other documents of the group.
        file_format: see `document_dataset`.
        example_buffer: int. Examples held by the shuffle buffer.
        drop_remainder: bool. Drop the last partial batch.
        range_bytes: int. Most bytes of a range, the unit that workers share out.
        counters: optional `DataCounters`, to read what was skipped and made
            (`log_skips` logs the skips; `keras-bert3 pretrain` calls it each epoch).
        input_context: optional `tf.distribute.InputContext` (as
            `distribute_datasets_from_function` or `worker_dataset` give): this
            worker reads only its share of the corpus's byte ranges (every
            `count`-th), so the workers' passes together cover the corpus once.
            Raises if the workers see different files. (A dataset of documents
            is sharded by documents.)
        data_service: optional "host:port" of a `tf.data` service dispatcher:
            the pipeline runs on its workers, which share out the byte ranges
            (see `served_by_data_service`; not reproducible, no `counters`, the
            "sentences" format only). Files must be paths the workers can read.
        packed_length: int or None. Pairs packed into rows of this many tokens for
            `BertPretrainer(packed=True)`, `batch_size` rows a batch (`pair_packing.packed_rows`).

    Returns:
        `tf.data.Dataset` of `(x, y, sample_weight)`: x = {"token_ids", "segment_ids",
        "padding_mask", "mask_positions"} (int32 `(batch, seq)`, mask_positions
        `(batch, max_predictions_per_seq)`), y = {"mlm": mask_ids int32,
        "nsp": next_sentence_label int32 `(batch,)`}, sample_weight = {"mlm":
        mask_weights float32}. Packed: as `pack_pairs` returns.

    Examples:

    >>> tokenizer = BertTokenizer.from_preset("path/to/bert-base-uncased")  # doctest: +SKIP
    >>> x, y, sample_weight = next(iter(pretraining_dataset("corpus/*.txt", tokenizer, batch_size=64)))  # doctest: +SKIP
    >>> x["token_ids"].shape, y["nsp"].shape  # doctest: +SKIP
    (TensorShape([64, 128]), TensorShape([64]))
    >>> rows = pretraining_dataset("corpus/*.txt", tokenizer, sequence_length=512, packed_length=512)  # doctest: +SKIP
    """
    maskable = sequence_length - (3 if next_sentence_prediction else 2)
    if max_predictions_per_seq > maskable:
        raise ValueError(
            f"max_predictions_per_seq={max_predictions_per_seq} is larger than the sequence: "
            f"sequence_length={sequence_length} leaves at most {maskable} maskable tokens."
        )
    pair_packing.check_packed_length(packed_length, sequence_length)
    pairer = DocumentGroupPairer.for_tokenizer(
        tokenizer,
        sequence_length=sequence_length,
        short_seq_prob=short_seq_prob,
        next_sentence_prediction=next_sentence_prediction,
        balanced_nsp=balanced_nsp,
    )
    if data_service is not None:
        _check_servable(files, counters, file_format)
    reproducible = data_service is None
    if isinstance(files, tf.data.Dataset):
        documents = _as_sentence_documents(files)
        if input_context is not None:
            documents = documents.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        groups = tf.data.Dataset.zip(documents.ragged_batch(pairing_group), counted_seeds(seed, DOCUMENT_GROUPS))
    else:
        paths = expand_files(files)
        count, index = (
            (1, 0) if input_context is None else (input_context.num_input_pipelines, input_context.input_pipeline_id)
        )
        if count > 1:
            check_same_on_workers(paths)
        ranges = streaming_ranges(paths, file_format, multiple_of=count, range_bytes=range_bytes)
        groups = corpus_groups(
            ranges,
            pairing_group,
            seed=seed,
            select=lambda positions: positions.shard(count, index),
            counters=counters,
            reproducible=reproducible,
        )
        groups = groups.map(lambda position, end, group, group_seed: (group, group_seed))
    # A service worker may be handed no range: the corpus is checked as a whole only locally.
    examples = paired_examples(groups, tokenizer, pairer, counters=counters, check_corpus=reproducible)
    shuffled = examples.shuffle(example_buffer, seed=seed, reshuffle_each_iteration=True)
    batches = pair_packing.pair_batches(shuffled, batch_size, drop_remainder, packed_length)
    masker = MlmMasker(
        tokenizer,
        max_predictions_per_seq=max_predictions_per_seq,
        masked_lm_prob=masked_lm_prob,
        whole_word_masking=whole_word_masking,
    )
    dataset = masked_batches(
        batches, masker, sequence_length, next_sentence_prediction, seed, reproducible=reproducible
    )
    dataset = pair_packing.packed_rows(
        dataset, packed_length, batch_size, masked_lm_prob=masked_lm_prob, drop_remainder=drop_remainder
    )
    if data_service is not None:
        dataset = served_by_data_service(dataset, data_service)
    return dataset if input_context is None else unsharded_by_tf_distribute(dataset)


def _check_servable(files, counters, file_format: str) -> None:
    """Refuses what `tf.data` service workers cannot run or share out."""
    if isinstance(files, tf.data.Dataset):
        raise ValueError("data_service= needs files, which the service's workers share out, not a tf.data.Dataset.")
    if counters is not None:
        raise ValueError(
            "counters= cannot be used with a tf.data service: the counts are Python callbacks, "
            "and the service's workers run only TensorFlow ops. Count on a local pass instead."
        )
    if file_format != "sentences":
        raise ValueError(
            f"The {file_format!r} format splits sentences in Python, which tf.data service workers "
            "cannot run: convert the corpus to one sentence a line (or prepare shards with "
            "`keras-bert3 prepare-data --file-format paragraphs`) and serve that."
        )


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
