"""Distributed training: strategies by name, BERT's layout map, and the cross-replica sums of the loss."""

from keras_bert3.distribution.bert_layout_map import bert_layout_map
from keras_bert3.distribution.strategy import STRATEGIES
from keras_bert3.distribution.strategy import distribution_scope

__all__ = ["STRATEGIES", "bert_layout_map", "distribution_scope"]
