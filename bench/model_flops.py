"""Model FLOPs of one BERT pretraining step (MLM + NSP), shared by the benches.

PaLM's convention (Chowdhery et al. 2022, appendix B): each multiply-add counts
2, the backward pass twice the forward; embedding lookups, LayerNorm, softmax
and the optimizer are not counted:

    6 * tokens * N_encoder + 12 * layers * hidden * seq * tokens
    + 6 * batch * predictions * (hidden^2 + hidden * vocabulary)   # MLM head at the masked slots
    + 6 * batch * (hidden^2 + 2 * hidden)                          # pooler + NSP

with N_encoder = 12 * hidden^2 per block (the FFN 4x wide).
"""


def pretraining_flops_per_step(
    *, layers: int, hidden: int, sequence_length: int, batch_size: int, predictions: int, vocabulary_size: int
) -> float:
    """Model FLOPs of one training step; e.g. BERT-base, batch 256 at length 128:

    >>> round(pretraining_flops_per_step(layers=12, hidden=768, sequence_length=128,
    ...       batch_size=256, predictions=20, vocabulary_size=30522) / 1e12, 1)
    17.9
    """
    tokens = batch_size * sequence_length
    flops = 6 * tokens * layers * 12 * hidden * hidden + 12 * layers * hidden * sequence_length * tokens
    flops += 6 * batch_size * predictions * (hidden * hidden + hidden * vocabulary_size)
    flops += 6 * batch_size * (hidden * hidden + 2 * hidden)
    return flops
