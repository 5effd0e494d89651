"""question_answering_dataset: every window of every example once, in order
or shuffled, with its labels, in batches padded to their longest window
(MiniLM's real vocabulary, the embedded docstring questions); bad examples
are refused naming the example."""

import numpy as np
import pytest

from keras_bert3.preprocessing.question_answering_dataset import question_answering_dataset
from keras_bert3.preprocessing.question_answering_preprocessor import QuestionAnsweringPreprocessor
from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
from keras_bert3_demo.docstring_questions import docstring_questions
from tests.qa_passages import LENGTHS

pytestmark = pytest.mark.backend_free  # TensorFlow and tf-text only: no Keras backend reaches it.


@pytest.mark.slow
def test_batches_hold_every_window_once_with_its_labels(minilm_dir):
    preprocessor = QuestionAnsweringPreprocessor(BertTokenizer.from_preset(minilm_dir), **LENGTHS)
    examples = {field: values[:40] for field, values in docstring_questions()["train"].items()}
    features = preprocessor((examples["question"], examples["context"]))
    windows = len(np.asarray(features["example_index"]))

    def rows(**options):
        found, widths = [], []
        for model_inputs, labels in question_answering_dataset(
            examples, preprocessor=preprocessor, batch_size=8, **options
        ):
            mask = model_inputs["padding_mask"].numpy().astype(bool)
            widths.append(mask.shape[1])
            starts, ends = labels["start_logits"].numpy(), labels["end_logits"].numpy()
            found += [(tuple(t[m]), s, e) for t, m, s, e in zip(model_inputs["token_ids"].numpy(), mask, starts, ends)]
        return found, widths

    in_order, widths = rows()
    assert len(in_order) == windows
    assert all(width % preprocessor.pad_to_multiple_of == 0 for width in widths)
    assert any(width < LENGTHS["sequence_length"] for width in widths)  # Padded to each batch's longest.
    shuffled, _ = rows(shuffle=True, seed=0)
    assert shuffled != in_order and sorted(shuffled) == sorted(in_order)
    assert any(start > 0 for _, start, _ in in_order)  # Some windows hold their answer.


def test_an_answer_not_where_answer_start_says_is_refused(minilm_dir):
    preprocessor = QuestionAnsweringPreprocessor(BertTokenizer.from_preset(minilm_dir), **LENGTHS)
    examples = {
        "question": ["What is it?"],
        "context": ["It is a test."],
        "answer_text": ["a test"],
        "answer_start": [5],
    }
    with pytest.raises(ValueError, match="Example 0: answer_start=5 does not point at answer_text 'a test'"):
        question_answering_dataset(examples, preprocessor=preprocessor)
