"""BertClassifier against Hugging Face `BertForSequenceClassification` on the
real all-MiniLM-L6-v2: a Hugging Face classifier checkpoint loads with its head
and gives the same logits, and one training step moves the weights by the same
gradients (the last block computes the [CLS] row alone)."""

import keras
import numpy as np
import pytest

from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.bert_classifier import BertClassifier
from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
from tests.hf_helpers import hf_inputs
from tests.hf_helpers import hf_outputs
from tests.hf_helpers import max_abs_diff
from tests.hf_helpers import save_hf_task
from tests.real_sentences import real_sentences
from tests.reference import import_reference


def classifier_pair(minilm_dir, num_classes=3):
    """Ours and theirs, without dropout, with the same (our random) head."""
    transformers = import_reference("transformers")
    torch = import_reference("torch")
    keras.utils.set_random_seed(0)
    backbone = BertBackbone.from_preset(minilm_dir, dropout=0.0, attention_dropout=0.0)
    tokenizer = BertTokenizer.from_preset(minilm_dir)
    ours = BertClassifier(backbone, num_classes, tokenizer=tokenizer, dropout=0.0)
    theirs = transformers.BertForSequenceClassification.from_pretrained(
        minilm_dir, num_labels=num_classes, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0
    )
    kernel, bias = (keras.ops.convert_to_numpy(w) for w in ours.output_dense.weights)
    with torch.no_grad():
        theirs.classifier.weight.copy_(torch.tensor(kernel.T))
        theirs.classifier.bias.copy_(torch.tensor(bias))
    return ours, theirs


def padded_real_batch(checkpoint_dir, texts=None):
    inputs = hf_inputs(checkpoint_dir, texts or real_sentences(6))
    assert inputs["padding_mask"].min() == 0  # Lengths differ: padding is exercised.
    return inputs


@pytest.fixture(scope="module")
def hf_classifier_dir(minilm_dir, tmp_path_factory):
    """MiniLM as a Hugging Face `BertForSequenceClassification` with a random 3-class head, saved."""
    transformers = import_reference("transformers")
    torch = import_reference("torch")
    torch.manual_seed(0)
    model = transformers.BertForSequenceClassification.from_pretrained(minilm_dir, num_labels=3)
    torch.nn.init.normal_(model.classifier.weight, std=0.5)  # Logits far enough apart to compare.
    torch.nn.init.normal_(model.classifier.bias, std=0.5)
    return save_hf_task(model, minilm_dir, tmp_path_factory.mktemp("hf_classifier")), model.eval()


@pytest.mark.slow
def test_a_hugging_face_classifier_loads_with_its_head_and_equal_logits(hf_classifier_dir):
    path, theirs = hf_classifier_dir
    ours = BertClassifier.from_preset(path)  # num_classes read from the head.
    assert ours.num_classes == 3
    with pytest.raises(ValueError, match="trained for 3 classes"):
        BertClassifier.from_preset(path, num_classes=4)
    texts = real_sentences(6)
    inputs = padded_real_batch(path, texts)
    expected = hf_outputs(theirs, inputs).logits.numpy()
    assert max_abs_diff(ours.predict(inputs, verbose=0), expected) < 1e-4
    assert max_abs_diff(ours.predict(texts, verbose=0), expected) < 1e-4  # Through our own tokenizer.


@pytest.mark.slow
def test_one_training_step_follows_the_transformers_gradients(minilm_dir):
    torch = import_reference("torch")
    ours, theirs = classifier_pair(minilm_dir)
    inputs = padded_real_batch(minilm_dir)
    labels = np.arange(len(inputs["token_ids"])) % 3

    theirs.train()
    loss = theirs(
        input_ids=torch.tensor(inputs["token_ids"], dtype=torch.long),
        token_type_ids=torch.tensor(inputs["segment_ids"], dtype=torch.long),
        attention_mask=torch.tensor(inputs["padding_mask"], dtype=torch.long),
        labels=torch.tensor(labels),
    ).loss
    loss.backward()
    last = theirs.bert.encoder.layer[-1]
    attention = last.attention.self
    expected = {
        # Our fused (query, key, value) kernel is (in, 3 * out); torch's are (out, in).
        "qkv": np.concatenate(
            [layer.weight.grad.numpy().T for layer in (attention.query, attention.key, attention.value)], axis=1
        ),
        "intermediate": last.intermediate.dense.weight.grad.numpy().T,
        "pooler": theirs.bert.pooler.dense.weight.grad.numpy().T,
        "first_block_qkv": theirs.bert.encoder.layer[0].attention.self.query.weight.grad.numpy().T,
    }

    block = ours.backbone.encoder_blocks[-1]
    hidden = ours.backbone.hidden_dim
    variables = {
        "qkv": block.qkv_dense.kernel,
        "intermediate": block.intermediate_dense.kernel,
        "pooler": ours.backbone.pooler.kernel,
        "first_block_qkv": ours.backbone.encoder_blocks[0].qkv_dense.kernel,
    }
    before = {name: keras.ops.convert_to_numpy(v) for name, v in variables.items()}
    # SGD: the step is the gradient times a rate large enough that rounding
    # the updated float32 weights does not blur it.
    rate = 1000.0
    ours.compile(
        optimizer=keras.optimizers.SGD(learning_rate=rate),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    ours.train_on_batch(inputs, labels)
    for name, variable in variables.items():
        step = (before[name] - keras.ops.convert_to_numpy(variable)) / rate
        if name == "first_block_qkv":
            step = step[:, :hidden]  # Its query columns.
        scale = np.abs(expected[name]).max()
        assert scale > 0, name
        assert max_abs_diff(step, expected[name]) < 1e-4 * scale, name
