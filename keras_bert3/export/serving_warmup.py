"""TF Serving warm-up records: requests the server runs when it loads a model
(`tensorflow_model_server --enable_model_warmup`, on by default since TF
Serving 2.x), so that users' first requests do not pay for the model's first
calls: kernel and oneDNN set-up on TensorFlow exports, and one XLA compilation
per input shape on JAX exports. The records are `PredictionLog`s of
`PredictRequest`s in `assets.extra/tf_serving_warmup_requests`, a TFRecord file
next to the SavedModel (TF Serving reads at most 1,000)."""

import os

import numpy as np

from keras_bert3.preprocessing.bert_text_preprocessor import INPUT_NAMES

WARMUP_FILE = os.path.join("assets.extra", "tf_serving_warmup_requests")
# Plain English prose shipped with the package, cut (and repeated where a
# model takes longer texts) to make the warm-up texts.
WARMUP_TEXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "warmup_text.txt")


def write_warmup_requests(export_dir: str, preprocessor, serving_inputs, model_inputs) -> int:
    """Writes warm-up requests for both signatures of a task's export: real
    sentences grown to every length its preprocessor pads to (multiples of
    `pad_to_multiple_of`, and one text over `sequence_length`), each alone, then
    all in one batch. Returns the number of requests.

    Args:
        export_dir: the SavedModel's directory.
        preprocessor: the task's preprocessor (its tokenizer and lengths set the texts).
        serving_inputs: `texts -> {input name: strings}` for `serving_default`.
        model_inputs: `texts -> {input name: int32 (batch, length)}` for
            `serve_token_ids` (keys beyond `INPUT_NAMES` are left out).
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
        requests.append(("serve_token_ids", {name: ids[name] for name in INPUT_NAMES}))
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
    """The warm-up requests of an export, as the server reads them:
    `[(signature name, {input name: numpy array}), ...]` ([] if it has none).
    """
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
    """Real text (`warmup_text.txt`) cut to reach each padded length of
    `preprocessor` as one segment, shortest first, and one text longer than
    its `sequence_length` (which it truncates)."""
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
