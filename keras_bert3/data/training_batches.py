"""The end of every pretraining pipeline, where the streamed corpus and pre-paired shards meet: pairs ->
shuffle -> batch -> masks -> rows -> a `tf.data` service or a `tf.distribute` worker."""

import tensorflow as tf

from keras_bert3.data import pair_packing
from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.masked_batches import masked_batches
from keras_bert3.data.masking_config import MaskingConfig
from keras_bert3.data.mlm_masker import MlmMasker
from keras_bert3.data.pairing_config import PairingConfig
from keras_bert3.data.without_autotune import without_autotune
from keras_bert3.distribution.data_service_client import served_by_data_service
from keras_bert3.distribution.worker_input import unsharded_by_tf_distribute


def training_batches(
    pairs: tf.data.Dataset,
    tokenizer,
    pairing: PairingConfig,
    masking: MaskingConfig,
    batching: BatchingConfig,
    seed: int,
    *,
    parse=None,
    input_context: tf.distribute.InputContext | None = None,
    data_service: str | None = None,
) -> tf.data.Dataset:
    """`BertPretrainer`'s `(x, y, sample_weight)` batches of `pairs`, masked afresh every pass
    (`masked_batches`), packed into rows where `batching.packed_length` is given (`pair_packing.packed_rows`).

    Args:
        pairs: pairs `(token_ids, segment_ids, lengths, labels)` (`paired_examples`), or records that `parse`
            turns into them once batched.
        tokenizer: the `BertTokenizer` of the pairs' ids (its `[MASK]` and vocabulary draw the masks).
        input_context, data_service: as `pretraining_dataset`.
    """
    shuffled = pairs.shuffle(batching.shuffle_buffer, seed=seed, reshuffle_each_iteration=True)
    batches = pair_packing.pair_batches(shuffled, batching.batch_size, batching.drop_remainder, batching.packed_length)
    if parse is not None:
        batches = batches.map(parse, num_parallel_calls=tf.data.AUTOTUNE)
    masker = MlmMasker(tokenizer, **masking.masker_settings())
    reproducible = data_service is None
    dataset = masked_batches(
        batches, masker, pairing.sequence_length, pairing.next_sentence_prediction, seed, reproducible=reproducible
    )
    dataset = pair_packing.packed_rows(
        dataset,
        batching.packed_length,
        batching.batch_size,
        masked_lm_prob=masking.masked_lm_prob,
        drop_remainder=batching.drop_remainder,
    )
    dataset = without_autotune(dataset)  # Here, or on the tf.data service's workers.
    if data_service is not None:
        dataset = without_autotune(served_by_data_service(dataset, data_service))  # Options stop at the service.
    return dataset if input_context is None else unsharded_by_tf_distribute(dataset)
