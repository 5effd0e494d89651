"""Warm-up records: real text at every padded length, written as TF Serving's
`PredictionLog`s and read back (the records are also run through each task's
export in the serving runtime: tests/models/*export* and `assert_warmup_served`)."""

import numpy as np
import pytest

from keras_bert3.export.serving_warmup import read_warmup_requests
from keras_bert3.export.serving_warmup import warmup_texts
from keras_bert3.export.serving_warmup import write_warmup_requests
from keras_bert3.preprocessing.bert_text_preprocessor import BertTextPreprocessor

pytestmark = pytest.mark.backend_free  # TensorFlow and tf-text only: no Keras backend reaches it.


def test_warmup_texts_reach_every_padded_length_and_one_is_overlong(tokenizer):
    preprocessor = BertTextPreprocessor(tokenizer, sequence_length=100, pad_to_multiple_of=16)
    texts = warmup_texts(preprocessor)
    padded = [preprocessor([text])["token_ids"].shape[1] for text in texts]
    assert padded == [16, 32, 48, 64, 80, 96, 100, 100]  # Every shape the preprocessor makes, shortest first.
    untruncated = len(tokenizer.tokenize(texts[-1]).numpy()) + 2
    assert untruncated > 100  # The last one is cut at sequence_length.
    assert all(len(text.split()) > 3 for text in texts)  # Real words, from the text shipped for it.


def test_warmup_texts_reach_lengths_past_the_text_shipped(tokenizer):
    """At 2,048 tokens (longer than the shipped prose), the prose is repeated to get there."""
    preprocessor = BertTextPreprocessor(tokenizer, sequence_length=2048, pad_to_multiple_of=512)
    padded = [preprocessor([text])["token_ids"].shape[1] for text in warmup_texts(preprocessor)]
    assert padded == [512, 1024, 1536, 2048, 2048]


def test_requests_round_trip_through_tf_serving_protos(tokenizer, tmp_path):
    preprocessor = BertTextPreprocessor(tokenizer, sequence_length=64)
    count = write_warmup_requests(str(tmp_path), preprocessor, lambda texts: {"text": texts}, preprocessor)
    requests = read_warmup_requests(str(tmp_path))
    texts = warmup_texts(preprocessor)
    assert count == len(requests) == 2 * (len(texts) + 1)  # Each text alone, then all at once; both signatures.
    served = [inputs["text"].tolist() for signature, inputs in requests if signature == "serving_default"]
    assert served == [[text.encode()] for text in texts] + [[text.encode() for text in texts]]
    for signature, inputs in requests[len(served) :]:
        assert signature == "serve_token_ids" and set(inputs) == {"token_ids", "segment_ids", "padding_mask"}
        assert inputs["token_ids"].dtype == np.int32
    np.testing.assert_array_equal(requests[-1][1]["token_ids"], preprocessor(texts)["token_ids"])


def test_an_export_without_records_reads_as_none(tmp_path):
    assert read_warmup_requests(str(tmp_path)) == []
