"""keras_bert3: BERT for Keras 3 on TensorFlow and JAX.

Example:
```python
import keras_bert3

backbone = keras_bert3.BertBackbone.from_preset("path/to/bert-base-uncased")
tokenizer = keras_bert3.BertTokenizer.from_preset("path/to/bert-base-uncased")
outputs = backbone(tokenizer.join_segments(["Hello world!"], sequence_length=16))
```
"""

from keras_bert3.command_start import unused_libraries_left_out

with unused_libraries_left_out():
    import keras  # noqa: F401  (what the modules below import first)
    import tensorflow  # noqa: F401

from keras_bert3.version import __version__

from keras_bert3.layers.bert_embeddings import BertEmbeddings
from keras_bert3.layers.bert_encoder_block import BertEncoderBlock
from keras_bert3.layers.bert_masked_lm_head import BertMaskedLMHead
from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.bert_classifier import BertClassifier
from keras_bert3.models.bert_masked_lm import BertMaskedLM
from keras_bert3.models.bert_multi_label_classifier import BertMultiLabelClassifier
from keras_bert3.models.bert_multiple_choice import BertMultipleChoice
from keras_bert3.models.bert_pretrainer import BertPretrainer
from keras_bert3.models.bert_question_answerer import BertQuestionAnswerer
from keras_bert3.models.bert_regressor import BertRegressor
from keras_bert3.models.bert_sizes import BERT_SIZES
from keras_bert3.models.bert_task import BertTask
from keras_bert3.preprocessing.bert_text_preprocessor import BertTextPreprocessor
from keras_bert3.models.bert_token_classifier import BertTokenClassifier
from keras_bert3.preprocessing.bert_token_classifier_preprocessor import BertTokenClassifierPreprocessor
from keras_bert3.export.multiple_choice_export import export_multiple_choice
from keras_bert3.export.question_answerer_export import export_question_answerer
from keras_bert3.preprocessing.question_answering_dataset import question_answering_dataset
from keras_bert3.preprocessing.multiple_choice_preprocessor import MultipleChoicePreprocessor
from keras_bert3.preprocessing.question_answering_preprocessor import QuestionAnsweringPreprocessor
from keras_bert3.export.text_classifier_export import export_text_classifier
from keras_bert3.export.token_classifier_export import export_token_classifier
from keras_bert3.metrics.squad_scores import squad_scores
from keras_bert3.preprocessing.text_classification_dataset import text_classification_dataset
from keras_bert3.preprocessing.token_classification_dataset import token_classification_dataset
from keras_bert3.presets.huggingface_checkpoint import export_backbone_to_huggingface
from keras_bert3.presets.huggingface_checkpoint import load_huggingface_heads
from keras_bert3.presets.preset_loader import KNOWN_PRESETS
from keras_bert3.optimizers.bert_optimizer import bert_optimizer
from keras_bert3.optimizers.linear_warmup_decay import LinearWarmupLinearDecay
from keras_bert3.training.resumable_backup import ResumableBackup
from keras_bert3.models.text_embedder import TextEmbedder
from keras_bert3.tokenizers.bert_normalizer import BertNormalizer
from keras_bert3.tokenizers.bert_segment_joiner import BertSegmentJoiner
from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
from keras_bert3.tokenizers.wordpiece_vocabulary import learn_wordpiece_vocabulary

# Subpackages the README calls through the package's name (`keras_bert3.data.pretraining_dataset`).
from keras_bert3 import data
from keras_bert3 import distribution

__all__ = [
    "data",
    "distribution",
    "BERT_SIZES",
    "KNOWN_PRESETS",
    "LinearWarmupLinearDecay",
    "BertBackbone",
    "BertClassifier",
    "BertEmbeddings",
    "BertEncoderBlock",
    "BertMaskedLM",
    "BertMaskedLMHead",
    "BertMultiLabelClassifier",
    "BertMultipleChoice",
    "BertNormalizer",
    "BertPretrainer",
    "BertQuestionAnswerer",
    "BertRegressor",
    "BertSegmentJoiner",
    "BertTask",
    "BertTextPreprocessor",
    "BertTokenClassifier",
    "BertTokenClassifierPreprocessor",
    "BertTokenizer",
    "MultipleChoicePreprocessor",
    "QuestionAnsweringPreprocessor",
    "ResumableBackup",
    "TextEmbedder",
    "bert_optimizer",
    "export_backbone_to_huggingface",
    "export_multiple_choice",
    "export_question_answerer",
    "export_text_classifier",
    "export_token_classifier",
    "learn_wordpiece_vocabulary",
    "load_huggingface_heads",
    "question_answering_dataset",
    "squad_scores",
    "text_classification_dataset",
    "token_classification_dataset",
]

from keras_bert3.renamed import old_names  # noqa: E402

__getattr__ = old_names(__name__, {"BertPacker": ("BertSegmentJoiner", BertSegmentJoiner)})
