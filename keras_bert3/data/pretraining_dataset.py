"""The pretraining data entry point: raw text to batches that `BertPretrainer.fit` takes."""

import os

import tensorflow as tf

from keras_bert3.data.corpus_reader import RANGE_BYTES
from keras_bert3.data.corpus_reader import expand_files
from keras_bert3.data.corpus_reader import streaming_ranges
from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.data_counters import DataCounters
from keras_bert3.data.document_group_pairer import DocumentGroupPairer
from keras_bert3.data.document_groups import corpus_groups
from keras_bert3.data.masking_config import MaskingConfig
from keras_bert3.data.paired_examples import paired_examples
from keras_bert3.data.pairing_config import PairingConfig
from keras_bert3.data.pairing_config import raise_problems
from keras_bert3.data.pipeline_seeds import DOCUMENT_GROUPS
from keras_bert3.data.pipeline_seeds import counted_seeds
from keras_bert3.data.training_batches import training_batches
from keras_bert3.data.old_keywords import takes_old_keywords
from keras_bert3.distribution.worker_input import check_same_on_workers


@takes_old_keywords
def pretraining_dataset(
    files: str | os.PathLike | list | tf.data.Dataset,
    tokenizer,
    pairing: PairingConfig = PairingConfig(),
    masking: MaskingConfig = MaskingConfig(),
    batching: BatchingConfig = BatchingConfig(),
    seed: int = 0,
    *,
    counters: DataCounters | None = None,
    input_context: tf.distribute.InputContext | None = None,
    data_service: str | None = None,
    range_bytes: int = RANGE_BYTES,
) -> tf.data.Dataset:
    """BERT pretraining batches from raw documents, streamed, with dynamic masking.

    Reproduces google-research/bert `create_pretraining_data.py` (NSP pairs as `DocumentGroupPairer`, 80/10/10
    masks as `MlmMasker`) with bounded memory and masks drawn afresh every pass (dynamic masking, Liu et al. 2019):
    byte ranges read a few at a time -> groups -> pairs -> `training_batches`. The k-th pass is the same for the
    same seed; the first pass's pairs are those `prepare_pretraining_data` writes.

    Args:
        files: path, glob or list of them (see `document_dataset`), or a `tf.data.Dataset` of documents: tf.string
            `(sentences,)` tensors, or scalar strings with one sentence a line.
        tokenizer: a `BertTokenizer`.
        pairing: `PairingConfig`: length, NSP (without it, y has no "nsp"), groups, the files' format.
        masking: `MaskingConfig`: at most the pairs' maskable tokens a pair.
        batching: `BatchingConfig`: batch size, packed rows, shuffle buffer.
        counters: optional `DataCounters` of what was skipped and made (`log_skips` logs the skips).
        input_context: optional `tf.distribute.InputContext`: this worker reads only every `count`-th byte range,
            so the workers' passes together cover the corpus once; raises if the workers see different files. A
            dataset of documents is sharded by documents.
        data_service: optional "host:port" of a `tf.data` service dispatcher whose workers run the pipeline
            (`served_by_data_service`): not reproducible, no `counters`, "sentences" only, paths they can read.
        range_bytes: int. Most bytes of a range, the unit that workers share out.

    Returns:
        `tf.data.Dataset` of `(x, y, sample_weight)`: x = {"token_ids", "segment_ids", "padding_mask"} int32
        `(batch, seq)` and "mask_positions" int32 `(batch, max_predictions_per_seq)`; y = {"mlm": int32 as
        mask_positions, "nsp": int32 `(batch,)`}; sample_weight = {"mlm": float32}. Packed: as `pack_pairs`.

    Example:
    >>> dataset = pretraining_dataset("corpus/*.txt", tokenizer, batching=BatchingConfig(batch_size=64))  # doctest: +SKIP
    """
    raise_problems(pairing.problems() + masking.problems(pairing) + batching.problems(pairing))
    if data_service is not None:
        _check_servable(files, counters, pairing.file_format)
    reproducible = data_service is None
    groups = _document_groups(files, pairing, seed, counters, input_context, reproducible, range_bytes)
    pairer = DocumentGroupPairer.for_tokenizer(tokenizer, **pairing.pairer_settings())
    # A service worker may be handed no range: the corpus is checked as a whole only locally.
    pairs = paired_examples(groups, tokenizer, pairer, counters=counters, check_corpus=reproducible)
    return training_batches(
        pairs, tokenizer, pairing, masking, batching, seed, input_context=input_context, data_service=data_service
    )


def _document_groups(files, pairing: PairingConfig, seed: int, counters, input_context, reproducible, range_bytes):
    """Stages 1 and 2, read and group: `(group, group_seed)` of `pairing.pairing_group`
    documents, this worker's share (`input_context`'s) of a dataset of documents or of files."""
    if isinstance(files, tf.data.Dataset):
        documents = _as_sentence_documents(files)
        if input_context is not None:
            documents = documents.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        return tf.data.Dataset.zip(documents.ragged_batch(pairing.pairing_group), counted_seeds(seed, DOCUMENT_GROUPS))
    paths = expand_files(files)
    count, index = (
        (1, 0) if input_context is None else (input_context.num_input_pipelines, input_context.input_pipeline_id)
    )
    if count > 1:
        check_same_on_workers(paths)
    ranges = streaming_ranges(paths, pairing.file_format, multiple_of=count, range_bytes=range_bytes)
    groups = corpus_groups(
        ranges,
        pairing.pairing_group,
        seed=seed,
        select=lambda positions: positions.shard(count, index),
        counters=counters,
        reproducible=reproducible,
    )
    return groups.map(lambda position, end, group, group_seed: (group, group_seed))


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
