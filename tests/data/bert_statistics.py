"""The statistics of BERT's pretraining data, asserted on real batches: 15% of
the real tokens selected, 80/10/10 replacement, half true continuations."""

import numpy as np


def assert_bert_statistics(dataset, tokenizer, *, min_examples: int) -> None:
    """Iterates `dataset` (batches `(x, y, sample_weight)` with NSP labels)
    and asserts google-research/bert's statistics over its examples: selected
    15% within 0.5 points, [MASK] / random / kept 80/10/10 within one point
    each, true continuations 50% within 2 points."""
    rows = list(dataset.as_numpy_iterator())
    token_ids = np.concatenate([x["token_ids"] for x, _, _ in rows])
    weights = np.concatenate([w["mlm"] for _, _, w in rows]) > 0
    positions = np.concatenate([x["mask_positions"] for x, _, _ in rows])
    original = np.concatenate([y["mlm"] for _, y, _ in rows])
    labels = np.concatenate([y["nsp"] for _, y, _ in rows])
    padding = np.concatenate([x["padding_mask"] for x, _, _ in rows])
    assert len(labels) >= min_examples, len(labels)
    assert abs(weights.sum() / (padding.sum() - 3 * len(labels)) - 0.15) < 0.005
    chosen = np.take_along_axis(token_ids, positions, axis=1)[weights]
    as_mask = np.mean(chosen == tokenizer.mask_token_id)
    kept = np.mean(chosen == original[weights])
    assert abs(as_mask - 0.8) < 0.01 and abs(kept - 0.1) < 0.01 and abs(1 - as_mask - kept - 0.1) < 0.01
    assert abs(np.mean(labels == 0) - 0.5) < 0.02, np.mean(labels == 0)
