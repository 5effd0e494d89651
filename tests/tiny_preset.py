"""A tiny BERT preset with MiniLM's real vocabulary (hidden size 8, two
layers): real tokenization at a cost of seconds, for tests of whole runs."""

from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
from tests.test_case import tiny_backbone


def write_tiny_preset(preset_dir: str, minilm_dir: str, *, max_sequence_length: int = 64, **overrides) -> str:
    """Writes a randomly initialised tiny backbone (`overrides`: other `BertBackbone` settings) and MiniLM's tokenizer
    to `preset_dir`."""
    tokenizer = BertTokenizer.from_preset(minilm_dir)
    backbone = tiny_backbone(tokenizer.vocabulary_size(), max_sequence_length=max_sequence_length, **overrides)
    backbone.save_to_preset(preset_dir)
    tokenizer.save_to_preset(preset_dir)
    return preset_dir
