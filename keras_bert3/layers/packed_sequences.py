"""Rows that hold several sequences (packed pretraining pairs), numbered in `sequence_ids` (1, 2, 3,
...; 0 for padding): which tokens may attend to which, and each token's position in its own sequence.
Both derive everything from those numbers, so no input can make two sequences see each other.
"""

from keras import ops


def packed_attention_mask(sequence_ids):
    """`(batch, seq, seq)` bool: query `i` may attend to key `j` when both belong to the same sequence
    (`sequence_ids` equal and above 0). A padding query attends to nothing (no loss reads its row)."""
    sequence_ids = ops.convert_to_tensor(sequence_ids)
    same = ops.equal(sequence_ids[:, :, None], sequence_ids[:, None, :])
    return ops.logical_and(same, ops.greater(sequence_ids, 0)[:, None, :])


def packed_positions(sequence_ids):
    """`(batch, seq)` int32: each token's position within its sequence, as it would have alone."""
    sequence_ids = ops.convert_to_tensor(sequence_ids)
    same = ops.cast(ops.equal(sequence_ids[:, :, None], sequence_ids[:, None, :]), "int32")
    # Row i of the running count along the keys, at key i: same-sequence tokens up to and including i.
    return ops.diagonal(ops.cumsum(same, axis=-1), axis1=1, axis2=2) - 1
