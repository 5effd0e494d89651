"""A tiny BERT preset with MiniLM's real vocabulary (hidden size 8, two
layers): real tokenization at a cost of seconds, for tests of whole runs."""

import keras

from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer


def write_tiny_preset(preset_dir: str, minilm_dir: str, *, max_sequence_length: int = 64) -> str:
    """Writes a randomly initialised tiny backbone and MiniLM's tokenizer to `preset_dir`."""
    keras.utils.set_random_seed(0)
    tokenizer = BertTokenizer.from_preset(minilm_dir)
    backbone = BertBackbone(vocabulary_size=tokenizer.vocabulary_size(), num_layers=2, num_heads=2, hidden_dim=8,
                            intermediate_dim=16, max_sequence_length=max_sequence_length)  # fmt: skip
    backbone.save_to_preset(preset_dir)
    tokenizer.save_to_preset(preset_dir)
    return preset_dir
