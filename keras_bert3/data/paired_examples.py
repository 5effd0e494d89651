"""Stage 3 of the pretraining pipeline, pair: groups of documents tokenized and paired (`DocumentGroupPairer`)
with TensorFlow ops alone, in parallel `tf.data` map workers."""

import tensorflow as tf

from keras_bert3.data.data_counters import DataCounters
from keras_bert3.data.document_group_pairer import DocumentGroupPairer
from keras_bert3.traced_once import traced_once

NO_TEXT = "The corpus has no document with text: every file or document is empty."
ONE_DOCUMENT = (
    "The corpus has a single document: next sentence prediction needs a second document to draw "
    "random next segments from. Add documents, or pass next_sentence_prediction=False."
)
# The counts each group reports, in order (see `DataCounters`).
GROUP_COUNTS = (
    "documents",
    "empty_documents",
    "sentences",
    "empty_sentences",
    "invalid_utf8_sentences",
    "truncated_sentences",
    "single_sentence_documents",
    "shortened_documents",
    "examples",
    "random_next",
    "forced_random_next",
    "dropped_for_nsp_balance",
)


def paired_examples(
    groups: tf.data.Dataset,
    tokenizer,
    pairer: DocumentGroupPairer,
    *,
    counters: DataCounters | None = None,
    check_corpus: bool = True,
) -> tf.data.Dataset:
    """Tokenizes and pairs groups of documents, in parallel: one example per element, int32 `token_ids`
    and `segment_ids` `(sequence_length,)`, `length` and `label`.

    Invalid UTF-8 is replaced by U+FFFD; sentences that tokenize to nothing and documents left empty are dropped
    and counted, as the original drops them. Each group's draws come from its seed.

    Args:
        groups: `tf.data.Dataset` of `(group, group_seed)`: tf.string `tf.RaggedTensor`s `(documents, sentences)`
            and stateless seeds `(2,)`, as `corpus_groups` gives.
        counters: optional `DataCounters`; one small Python call per group adds to it.
        check_corpus: bool. At the end of the stream, raise `tf.errors.InvalidArgumentError` for a corpus without
            text or, with NSP, of a single document (False for a part of a corpus, e.g. one shard).
    """
    # An end marker after the last group, where the documents seen are checked.
    end = (tf.RaggedTensor.from_row_splits(tf.zeros([0], tf.string), tf.zeros([1], tf.int64)), tf.zeros([2], tf.int64))
    marked = groups.map(lambda *group: (group, False)).concatenate(tf.data.Dataset.from_tensors((end, True)))
    needed = 2 if pairer.next_sentence_prediction else 1

    @tf.autograph.experimental.do_not_convert  # Traced as written: its checks are tf.debugging ops.
    def check_at_end(seen, group_and_end):
        (group, group_seed), is_end = group_and_end
        seen = seen + group.nrows()
        checks = [
            tf.debugging.Assert(~is_end | (seen > 0), [NO_TEXT]),
            tf.debugging.Assert(~is_end | (seen >= needed), [ONE_DOCUMENT]),
        ]
        with tf.control_dependencies(checks):
            return seen, ((tf.identity(group), group_seed), is_end)

    if check_corpus:
        marked = marked.scan(tf.constant(0, tf.int64), check_at_end)
        groups = marked.filter(lambda group, is_end: ~is_end)
        groups = groups.map(lambda group, is_end: group)

    pair_and_count = pairing_function(tokenizer, pairer)

    @tf.autograph.experimental.do_not_convert  # Traced as written: no Python control flow.
    def pair(group, group_seed):
        token_ids, segment_ids, lengths, labels, counts = pair_and_count(group, group_seed)
        if counters is None:
            return token_ids, segment_ids, lengths, labels
        add = lambda counts: counters.add(**dict(zip(GROUP_COUNTS, counts.numpy().tolist())))  # noqa: E731
        with tf.control_dependencies([tf.py_function(add, [counts], [])]):
            return tuple(tf.identity(part) for part in (token_ids, segment_ids, lengths, labels))

    pairs = groups.map(pair, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    return pairs.unbatch()


def pairing_function(tokenizer, pairer: DocumentGroupPairer):
    """`pair_group` for this tokenizer and the pairer's settings, traced once a process: every pipeline built after
    the first (a run's one-batch check and then its training pass; a notebook's second build) calls its graph."""

    def pair(tokenizer, group, group_seed):
        return pair_group(group, group_seed, tokenizer, pairer)

    return traced_once(tokenizer, ("pair_group", tuple(sorted(vars(pairer).items()))), pair)


def pair_group(group: tf.RaggedTensor, group_seed, tokenizer, pairer: DocumentGroupPairer):
    """One group of raw documents `(documents, sentences)` to its `(token_ids, segment_ids, lengths, labels)` and
    its int64 counts `(len(GROUP_COUNTS),)`, in `GROUP_COUNTS`' order."""
    sentences = group.flat_values
    valid = tf.strings.unicode_transcode(sentences, "UTF-8", "UTF-8", errors="replace")
    invalid = tf.reduce_sum(tf.cast(tf.not_equal(valid, sentences), tf.int64))
    ids = tokenizer.tokenize(valid)  # (sentences, tokens)
    # Empty rows dropped by gathering: `tf.ragged.boolean_mask` would build a dense (sentences, longest) tensor.
    non_empty = ids.row_lengths() > 0
    kept_before = tf.concat([[0], tf.cumsum(tf.cast(non_empty, tf.int64))], axis=0)
    tokenized = tf.RaggedTensor.from_row_splits(  # (documents, sentences, tokens)
        tf.gather(ids, tf.where(non_empty)[:, 0]), tf.gather(kept_before, group.row_splits)
    )
    sentence_counts = tokenized.row_lengths()
    tokenized = tf.gather(tokenized, tf.where(sentence_counts > 0)[:, 0])
    usable = tokenized.nrows()
    examples = tf.cond(usable > 0, lambda: pairer(tokenized, group_seed), pairer.empty)
    shortened, made, random_next, forced, dropped = tf.unstack(examples["counts"])
    kept = tf.reduce_sum(sentence_counts)
    counts = tf.stack(
        [
            usable,
            group.nrows() - usable,
            kept,
            tf.size(sentences, tf.int64) - kept,
            invalid,
            tf.reduce_sum(tf.cast(ids.row_lengths() > pairer.max_tokens, tf.int64)),
            tf.reduce_sum(tf.cast(sentence_counts == 1, tf.int64)),
            shortened,
            made,
            random_next,
            forced,
            dropped,
        ]
    )
    return examples["token_ids"], examples["segment_ids"], examples["lengths"], examples["labels"], counts
