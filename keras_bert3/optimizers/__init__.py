"""The BERT pretraining recipe: optimizer and learning-rate schedule."""

from keras_bert3.optimizers.bert_adamw import BertAdamW
from keras_bert3.optimizers.bert_lamb import BertLamb
from keras_bert3.optimizers.bert_optimizer import bert_optimizer
from keras_bert3.optimizers.linear_warmup_decay import LinearWarmupLinearDecay

__all__ = ["BertAdamW", "BertLamb", "LinearWarmupLinearDecay", "bert_optimizer"]
