"""Mixed precision on a GPU: float16 pretraining with loss scaling learns, and
a classifier fine-tuned in mixed precision exports a SavedModel that serves
(on the GPU and on the CPU) what `predict` gives, within 1e-3."""

import os
import tempfile

import keras
import numpy as np
import pytest

from keras_bert3.data.pretraining_dataset import pretraining_dataset
from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.bert_classifier import BertClassifier
from keras_bert3.models.bert_pretrainer import BertPretrainer
from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
from keras_bert3_demo.default_corpus import default_corpus_path
from keras_bert3_demo.docstring_topics import docstring_topics
from keras_bert3.data.batching_config import BatchingConfig


def test_float16_pretraining_with_loss_scaling_learns(minilm_dir):
    keras.utils.set_random_seed(0)
    tokenizer = BertTokenizer.from_preset(minilm_dir)
    dataset = pretraining_dataset(
        default_corpus_path(), tokenizer, batching=BatchingConfig(batch_size=32, drop_remainder=True)
    ).repeat()
    backbone = BertBackbone.from_size("mini", vocabulary_size=tokenizer.vocabulary_size(), dtype="mixed_float16")
    pretrainer = BertPretrainer(backbone)
    pretrainer.compile(learning_rate=1e-3, total_steps=60, warmup_steps=6)
    assert isinstance(pretrainer.optimizer, keras.optimizers.LossScaleOptimizer)
    losses = pretrainer.fit(dataset, epochs=6, steps_per_epoch=10, verbose=0).history["loss"]
    print(f"float16 losses by epoch: {np.round(losses, 3).tolist()}")
    assert np.all(np.isfinite(losses))
    assert losses[-1] < losses[0] - 1.0
    assert all(v.dtype == "float32" for v in pretrainer.trainable_variables)


@pytest.mark.parametrize("precision", ["mixed_float16", "mixed_bfloat16"])
def test_mixed_precision_export_serves_what_predict_gives(minilm_dir, precision):
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the tokenizer's ops)

    keras.utils.set_random_seed(0)
    data = docstring_topics()
    classifier = BertClassifier.from_preset(minilm_dir, num_classes=len(data["class_names"]), dtype=precision)
    classifier.fit(data["train_texts"][:512], np.array(data["train_labels"][:512]), epochs=1, verbose=0)
    texts = data["test_texts"][:256]
    logits = classifier.predict(texts, verbose=0)
    expected = np.exp(logits - logits.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    path = os.path.join(tempfile.mkdtemp(), "1")
    classifier.export(path)
    serve = tf.saved_model.load(path).signatures["serving_default"]
    devices = ["/CPU:0"] + (["/GPU:0"] if tf.config.list_physical_devices("GPU") else [])
    for device in devices:
        with tf.device(device):
            served = np.concatenate(
                [serve(text=tf.constant(texts[i : i + 64]))["probabilities"].numpy() for i in range(0, len(texts), 64)]
            )
        difference = np.abs(served - expected).max()
        print(f"{precision}: export served on {device} vs predict: largest difference {difference:.1e}")
        assert difference < 1e-3, device
