"""Masked language model inputs (80/10/10), vectorised over a batch in TensorFlow,
as `create_masked_lm_predictions` in google-research/bert `create_pretraining_data.py`."""

import re

import numpy as np
import tensorflow as tf

# Bracketed vocabulary entries ([PAD], [unused0], ...) are never drawn as random tokens.
_RESERVED = re.compile(r"^\[[^\]]+\]$")


class MlmMasker:
    """Chooses and replaces tokens for masked language modelling, on whole batches.

    Candidates are all tokens but [CLS], [SEP] and padding; `min(max_predictions_per_seq, max(1, round(n *
    masked_lm_prob)))` of the n candidates are chosen uniformly (the original counts [CLS] and [SEP] in n too);
    each becomes [MASK] with probability 0.8, stays itself with 0.1, or becomes a random token with 0.1, drawn
    from the vocabulary minus the special and bracketed tokens ([unused0], ...). With `whole_word_masking`, words
    (a token and the `##` pieces after it) are taken whole, in random order while they fit, as the original.
    Positions are sorted and padded to `max_predictions_per_seq` with weight 0 (position 0, id 0). TensorFlow ops
    (for `tf.data.Dataset.map`); results depend only on the inputs and the seed.

    Args:
        tokenizer: a `BertTokenizer` (its vocabulary and special token ids).
        max_predictions_per_seq: int. Most positions predicted per sequence.
        masked_lm_prob: float. Fraction of candidates chosen.

    Example:
    >>> masker = MlmMasker(tokenizer, max_predictions_per_seq=20)  # doctest: +SKIP
    >>> out = masker(token_ids, padding_mask, seed=[1, 2])  # doctest: +SKIP
    """

    def __init__(
        self,
        tokenizer,
        *,
        max_predictions_per_seq: int = 20,
        masked_lm_prob: float = 0.15,
        whole_word_masking: bool = False,
    ):
        if max_predictions_per_seq < 1:
            raise ValueError(f"max_predictions_per_seq must be at least 1, got {max_predictions_per_seq}.")
        if not 0.0 < masked_lm_prob <= 1.0:
            raise ValueError(f"masked_lm_prob must be in (0, 1], got {masked_lm_prob}.")
        self.max_predictions_per_seq = int(max_predictions_per_seq)
        self.masked_lm_prob = float(masked_lm_prob)
        self.whole_word_masking = bool(whole_word_masking)
        self.cls_token_id = tokenizer.cls_token_id
        self.sep_token_id = tokenizer.sep_token_id
        self.mask_token_id = tokenizer.mask_token_id
        vocabulary = tokenizer.get_vocabulary()
        special = set(tokenizer.special_token_ids)
        allowed = [i for i, token in enumerate(vocabulary) if i not in special and not _RESERVED.match(token)]
        if not allowed:
            raise ValueError("The vocabulary has no ordinary token to draw random replacements from.")
        self.random_token_ids = tf.constant(allowed, tf.int32)
        self.continuation = tf.constant(np.array([t.startswith("##") for t in vocabulary]))

    def __call__(self, token_ids, padding_mask, seed) -> dict[str, tf.Tensor]:
        """Masks a batch of int32 `token_ids` `(batch, seq)`; `padding_mask` `(batch, seq)` is true on real
        tokens, `seed` an int `(2,)` tensor. Returns int32 `token_ids` `(batch, seq)`, masked; `mask_positions`,
        `mask_ids` and float32 `mask_weights` (1 on real predictions), `(batch, max_predictions_per_seq)`."""
        token_ids = tf.convert_to_tensor(token_ids, tf.int32)
        length = token_ids.shape[-1]
        if length is not None and self.max_predictions_per_seq > length:
            raise ValueError(
                f"max_predictions_per_seq={self.max_predictions_per_seq} is larger than the sequence ({length} tokens)."
            )
        seeds = tf.random.experimental.stateless_split(tf.cast(seed, tf.int64), 4)
        shape = tf.shape(token_ids)
        candidates = (
            tf.cast(padding_mask, tf.bool)
            & tf.not_equal(token_ids, self.cls_token_id)
            & tf.not_equal(token_ids, self.sep_token_id)
        )  # (batch, seq)
        count = tf.reduce_sum(tf.cast(candidates, tf.float32), axis=1)
        num = tf.minimum(float(self.max_predictions_per_seq), tf.maximum(1.0, tf.round(count * self.masked_lm_prob)))
        num = tf.cast(tf.where(count > 0, num, 0.0), tf.int32)  # (batch,)
        if self.whole_word_masking:
            selected = self._select_words(token_ids, candidates, num, seeds[0])
        else:
            score = tf.where(candidates, tf.random.stateless_uniform(shape, seeds[0]), 2.0)
            rank = tf.argsort(tf.argsort(score, axis=1), axis=1)  # Rank of each position in a random order.
            selected = candidates & (rank < num[:, None])

        # 80% [MASK], 10% unchanged, 10% a random token.
        draw = tf.random.stateless_uniform(shape, seeds[1])
        random_ids = tf.gather(
            self.random_token_ids,
            tf.random.stateless_uniform(shape, seeds[2], 0, tf.size(self.random_token_ids), dtype=tf.int32),
        )
        replacement = tf.where(draw < 0.8, self.mask_token_id, tf.where(draw < 0.9, token_ids, random_ids))
        masked_ids = tf.where(selected, replacement, token_ids)

        # Selected positions in order, padded to max_predictions_per_seq.
        positions = tf.range(tf.shape(token_ids)[1])[None, :]
        order = tf.sort(tf.where(selected, positions, positions + shape[1]), axis=1)
        order = order[:, : self.max_predictions_per_seq]  # (batch, max_predictions)
        real = order < shape[1]
        mask_positions = tf.where(real, order, 0)
        mask_ids = tf.where(real, tf.gather(token_ids, mask_positions, batch_dims=1), 0)
        return {
            "token_ids": masked_ids,
            "mask_positions": mask_positions,
            "mask_ids": mask_ids,
            "mask_weights": tf.cast(real, tf.float32),
        }

    def _select_words(self, token_ids, candidates, num, seed) -> tf.Tensor:
        """Whole words in a random order, each taken if it still fits in `num` (as the original)."""
        length = tf.shape(token_ids)[1]
        piece = tf.gather(self.continuation, token_ids) & candidates
        previous = tf.pad(candidates[:, :-1], [[0, 0], [1, 0]])
        starts = candidates & ~(piece & previous)  # A "##" piece after [CLS]/[SEP] starts a word.
        word = tf.cumsum(tf.cast(starts, tf.int32), axis=1) - 1  # (batch, seq) word index
        word_of_candidate = tf.where(candidates, word, -1)
        word_length = tf.reduce_sum(tf.one_hot(word_of_candidate, length, dtype=tf.int32), axis=1)  # (batch, words)
        score = tf.where(word_length > 0, tf.random.stateless_uniform(tf.shape(word_length), seed), 2.0)
        order = tf.argsort(score, axis=1)  # Words in random order.
        length_in_order = tf.gather(word_length, order, batch_dims=1)

        def take(total, lengths):  # One word per step, across the batch.
            fits = (lengths > 0) & (total + lengths <= num)
            return total + tf.where(fits, lengths, 0), fits

        _, taken_in_order = tf.scan(
            lambda carry, lengths: take(carry[0], lengths),
            tf.transpose(length_in_order),
            initializer=(tf.zeros_like(num), tf.zeros_like(num, dtype=tf.bool)),
        )  # (words, batch)
        taken_in_order = tf.transpose(taken_in_order)
        taken = tf.gather(taken_in_order, tf.argsort(order, axis=1), batch_dims=1)  # (batch, words)
        return candidates & tf.gather(taken, tf.maximum(word, 0), batch_dims=1)
