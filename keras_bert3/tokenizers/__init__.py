"""BERT tokenization as TensorFlow graph ops, id-for-id equal to Hugging Face."""

from keras_bert3.tokenizers.bert_normalizer import BertNormalizer
from keras_bert3.tokenizers.bert_segment_joiner import BertSegmentJoiner
from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
from keras_bert3.tokenizers.unicode_table import load_unicode_table
from keras_bert3.tokenizers.wordpiece_vocabulary import learn_wordpiece_vocabulary

__all__ = [
    "BertNormalizer",
    "BertSegmentJoiner",
    "BertTokenizer",
    "learn_wordpiece_vocabulary",
    "load_unicode_table",
]

from keras_bert3.renamed import old_names  # noqa: E402

__getattr__ = old_names(__name__, {"BertPacker": ("BertSegmentJoiner", BertSegmentJoiner)})
