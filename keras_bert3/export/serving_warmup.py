"""TF Serving warm-up records: requests the server runs when it loads a model, so that users' first
requests do not pay for set-up or XLA compilation. `PredictionLog`s in
`assets.extra/tf_serving_warmup_requests` (TF Serving reads at most 1,000)."""

import os

import numpy as np

from keras_bert3.preprocessing.bert_text_preprocessor import INPUT_NAMES

WARMUP_FILE = os.path.join("assets.extra", "tf_serving_warmup_requests")
# English prose shipped with the package, cut into the warm-up texts.
WARMUP_TEXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "warmup_text.txt")


def write_warmup_requests(export_dir: str, preprocessor, serving_inputs, model_inputs, names=INPUT_NAMES) -> int:
    """Writes warm-up requests for both signatures of an export: texts of every padded length, each alone,
    then all in one batch; returns their number. `serving_inputs`: `texts -> {name: strings}`;
    `model_inputs`: `texts -> {name: int32 (batch, length)}` (only `names` kept: `INPUT_NAMES` by default).
    """
    import tensorflow as tf
    from tensorflow_serving.apis import model_pb2
    from tensorflow_serving.apis import predict_pb2
    from tensorflow_serving.apis import prediction_log_pb2

    texts = warmup_texts(preprocessor)
    batches = [[text] for text in texts] + [texts]
    requests = [("serving_default", serving_inputs(batch)) for batch in batches]
    for batch in batches:
        ids = model_inputs(batch)
        requests.append(("serve_token_ids", {name: ids[name] for name in names}))
    path = os.path.join(export_dir, WARMUP_FILE)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with tf.io.TFRecordWriter(path) as writer:
        for signature, inputs in requests:
            request = predict_pb2.PredictRequest(model_spec=model_pb2.ModelSpec(signature_name=signature))
            for name, value in inputs.items():
                request.inputs[name].CopyFrom(tf.make_tensor_proto(np.asarray(value)))
            log = prediction_log_pb2.PredictionLog(predict_log=prediction_log_pb2.PredictLog(request=request))
            writer.write(log.SerializeToString())
    return len(requests)


def read_warmup_requests(export_dir: str) -> list[tuple[str, dict]]:
    """An export's warm-up requests: `[(signature name, {input name: numpy array}), ...]`, maybe []."""
    import tensorflow as tf
    from tensorflow_serving.apis import prediction_log_pb2

    path = os.path.join(export_dir, WARMUP_FILE)
    if not tf.io.gfile.exists(path):
        return []
    requests = []
    for record in tf.data.TFRecordDataset(path).as_numpy_iterator():
        request = prediction_log_pb2.PredictionLog.FromString(record).predict_log.request
        inputs = {name: tf.make_ndarray(proto) for name, proto in request.inputs.items()}
        requests.append((request.model_spec.signature_name, inputs))
    return requests


def warmup_texts(preprocessor) -> list[str]:
    """Texts that reach each padded length of `preprocessor`, shortest first, and one over its `sequence_length`."""
    with open(WARMUP_TEXT, encoding="utf-8") as f:
        prose = f.read().split()
    counts = preprocessor.tokenizer.tokenize(prose).row_lengths().numpy()
    repeats = -(-(2 * preprocessor.sequence_length + 2) // max(int(counts.sum()), 1))  # Past twice the limit.
    words, counts = prose * repeats, np.tile(counts, repeats)
    packed_lengths = 2 + np.cumsum(counts)  # [CLS] words [SEP]
    multiple, limit = preprocessor.pad_to_multiple_of, preprocessor.sequence_length
    texts = []
    for padded in range(multiple, limit + multiple, multiple):
        fitting = np.searchsorted(packed_lengths, min(padded, limit), side="right")
        if fitting and (not texts or len(texts[-1].split()) < fitting):
            texts.append(" ".join(words[:fitting]))
    overlong = min(len(words), np.searchsorted(packed_lengths, 2 * limit, side="right"))
    return texts + [" ".join(words[:overlong])]
