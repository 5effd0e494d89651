"""Scores of predictions against references, outside the model (SQuAD's exact match and F1)."""
