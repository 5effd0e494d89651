"""The whole pretraining recipe against the reference: `BertPretrainer` with its
default `compile` and Hugging Face `BertForPreTraining` (PyTorch) with the
same recipe written the way Hugging Face users write it (torch AdamW with no
decay on biases and LayerNorm, `get_linear_schedule_with_warmup`,
`clip_grad_norm_`), from the same initial weights, on the same batches from
`pretraining_dataset`, dropout off: every step's loss is the same."""

import numpy as np
import pytest

from keras_bert3.data import pretraining_dataset
from keras_bert3.models.bert_pretrainer import BertPretrainer
from keras_bert3.tokenizers import BertTokenizer
from keras_bert3_demo import default_corpus_path
from tests.hf_helpers import tiny_hf_config
from tests.reference import import_reference
from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.masking_config import MaskingConfig
from keras_bert3.data.pairing_config import PairingConfig

STEPS, WARMUP, PEAK_LEARNING_RATE, WEIGHT_DECAY = 50, 5, 1e-3, 0.01
SEQUENCE_LENGTH, PREDICTIONS, BATCH_SIZE = 64, 10, 16


def hf_labels(x, y, sample_weight) -> np.ndarray:
    """Our (mask_positions, mask_ids, mask_weights) as Hugging Face's
    per-token labels: the original token at a masked position, -100 elsewhere."""
    labels = np.full(x["token_ids"].shape, -100, np.int64)
    rows, slots = np.nonzero(sample_weight["mlm"])
    labels[rows, x["mask_positions"][rows, slots]] = y["mlm"][rows, slots]
    return labels


def hugging_face_losses(model, batches) -> list[float]:
    torch = import_reference("torch")
    transformers = import_reference("transformers")
    no_decay = [p for n, p in model.named_parameters() if "bias" in n or "LayerNorm" in n]
    decay = [p for n, p in model.named_parameters() if not ("bias" in n or "LayerNorm" in n)]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": WEIGHT_DECAY}, {"params": no_decay, "weight_decay": 0.0}],
        lr=PEAK_LEARNING_RATE,
        betas=(0.9, 0.999),
        eps=1e-6,
    )
    schedule = transformers.get_linear_schedule_with_warmup(optimizer, WARMUP, STEPS)
    model.train()
    losses = []
    for x, y, sample_weight in batches:
        loss = model(
            input_ids=torch.tensor(x["token_ids"], dtype=torch.long),
            token_type_ids=torch.tensor(x["segment_ids"], dtype=torch.long),
            attention_mask=torch.tensor(x["padding_mask"], dtype=torch.long),
            labels=torch.tensor(hf_labels(x, y, sample_weight)),
            next_sentence_label=torch.tensor(y["nsp"], dtype=torch.long),
        ).loss
        losses.append(loss.item())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
    return losses


@pytest.mark.slow
def test_fifty_steps_of_the_recipe_equal_hugging_face(tmp_path, run_vocabulary):
    torch = import_reference("torch")
    transformers = import_reference("transformers")
    # A 1,500-token vocabulary learnt on the corpus: Hugging Face predicts every
    # position over the whole vocabulary, which at MiniLM's 30,522 took 25 s.
    tokenizer = BertTokenizer(str(run_vocabulary(tmp_path / "vocabulary") / "vocabulary.txt"))
    dataset = pretraining_dataset(
        default_corpus_path(),
        tokenizer,
        PairingConfig(sequence_length=SEQUENCE_LENGTH),
        MaskingConfig(max_predictions_per_seq=PREDICTIONS),
        BatchingConfig(batch_size=BATCH_SIZE),
        seed=3,
    )
    batches = list(dataset.take(STEPS).as_numpy_iterator())
    assert len(batches) == STEPS

    torch.manual_seed(0)
    config = tiny_hf_config(
        vocab_size=tokenizer.vocabulary_size(),
        hidden_size=128,
        num_hidden_layers=2,
        intermediate_size=512,
        num_attention_heads=2,
        max_position_embeddings=SEQUENCE_LENGTH,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    reference = transformers.BertForPreTraining(config)
    reference.save_pretrained(tmp_path)  # The initial weights, which ours loads.

    pretrainer = BertPretrainer.from_preset(str(tmp_path))
    pretrainer.compile(
        learning_rate=PEAK_LEARNING_RATE,
        total_steps=STEPS,
        warmup_steps=WARMUP,
        weight_decay=WEIGHT_DECAY,
        precision="float32",
    )  # The reference trains in float32.
    ours = [float(pretrainer.train_on_batch(x, y, w, return_dict=True)["loss"]) for x, y, w in batches]
    theirs = hugging_face_losses(reference, batches)

    assert theirs[-1] < theirs[0] - 1.0  # The run learns: a test of steps that change something.
    relative = np.abs(np.subtract(ours, theirs)) / np.abs(theirs)
    print(
        f"losses {theirs[0]:.3f} -> {theirs[-1]:.3f}; largest relative difference {relative.max():.1e} at step {relative.argmax()}"
    )
    assert relative.max() < 1e-3, (ours, theirs)
