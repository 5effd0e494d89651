"""Stage 4 of the pretraining pipeline, mask: batches of unmasked pairs to the `(x, y, sample_weight)` that
`BertPretrainer.fit` takes, with 80/10/10 masks (`MlmMasker`) drawn afresh on every pass."""

import tensorflow as tf

from keras_bert3.data.mlm_masker import MlmMasker
from keras_bert3.data.pipeline_seeds import MASKS
from keras_bert3.data.pipeline_seeds import counted_seeds


def masked_batches(
    batches: tf.data.Dataset,
    masker: MlmMasker,
    sequence_length: int,
    next_sentence_prediction: bool,
    seed: int,
    *,
    reproducible: bool = True,
) -> tf.data.Dataset:
    """Batches of pairs `(token_ids, segment_ids, lengths, labels)` to model inputs, batch k of a pass
    masked with the pass's seed folded with `MASKS` and k (`counted_seeds`; with the clock if not `reproducible`)."""
    mask_seeds = counted_seeds(seed, MASKS, reproducible=reproducible)

    @tf.autograph.experimental.do_not_convert  # Traced as written, as `paired_examples`.
    def to_inputs(batch, mask_seed):
        token_ids, segment_ids, lengths, labels = batch
        padding_mask = tf.cast(tf.range(sequence_length)[None, :] < lengths[:, None], tf.int32)
        masked = masker(token_ids, padding_mask, mask_seed)
        return model_inputs(
            masked["token_ids"],
            segment_ids,
            padding_mask,
            masked["mask_positions"],
            masked["mask_ids"],
            masked["mask_weights"],
            labels if next_sentence_prediction else None,
        )

    dataset = tf.data.Dataset.zip(batches, mask_seeds)
    dataset = dataset.map(to_inputs, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    return dataset.prefetch(tf.data.AUTOTUNE)


def model_inputs(token_ids, segment_ids, padding_mask, mask_positions, mask_ids, mask_weights, nsp_labels=None):
    """The `(x, y, sample_weight)` of a masked batch as `BertPretrainer` reads it; no "nsp" if `nsp_labels` is None."""
    x = {
        "token_ids": token_ids,
        "segment_ids": segment_ids,
        "padding_mask": padding_mask,
        "mask_positions": mask_positions,
    }
    y = {"mlm": mask_ids} if nsp_labels is None else {"mlm": mask_ids, "nsp": nsp_labels}
    return x, y, {"mlm": mask_weights}
