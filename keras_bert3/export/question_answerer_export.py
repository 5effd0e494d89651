"""SavedModels that answer questions from strings: windows with a document
stride, the model and span decoding all in the graph (TensorFlow core and
tf-text ops only), for TF Serving."""

import keras
from keras import ops

from keras_bert3.export.saved_model_export import add_token_ids_endpoint
from keras_bert3.export.saved_model_export import write_saved_model

WARMUP_QUESTION = "What does this function return?"


def export_question_answerer(
    model, filepath: str, *, verbose: bool = False, warmup: bool = True, jit_compile: bool = False
) -> None:
    """Writes `model` (a `BertQuestionAnswerer`) as a SavedModel with two signatures.

    - `serving_default`: `question` and `context`, strings `(batch,)`; returns
      `answer` (string `(batch,)`, the span of the context), `start` and `end`
      (int32 `(batch,)` character offsets: `context[start:end] == answer`) and
      `score` (float32 `(batch,)`), as `model.predict((questions, contexts))`.
      The passage is split into windows with the model's `doc_stride`
      (at most `max_windows` windows: the rest of a very long passage is
      dropped); empty strings give "" with score 0; invalid UTF-8 is
      replaced (offsets then count U+FFFD characters).
    - `serve_token_ids`: int32 `(windows, seq)` `token_ids`, `segment_ids`,
      `padding_mask`; returns float32 `start_logits` and `end_logits`, for
      clients that tokenize and decode themselves.

    With `warmup`, TF Serving warm-up records (real passages of every
    padded length, `WARMUP_QUESTION`) go to `assets.extra/` (`write_warmup_requests`).
    With `jit_compile`, the model (not the tokenizer or the span decoding)
    runs compiled by XLA, see `add_token_ids_endpoint` for the server's flag.

    On JAX the model is converted with jax2tf (shape-polymorphic in windows
    and length); on TensorFlow it is traced directly. Loading needs
    `import tensorflow_text` before `tf.saved_model.load`.

    Example:
    >>> qa.export("serving/1")
    >>> reloaded = tf.saved_model.load("serving/1")  # After `import tensorflow_text`.
    >>> reloaded.signatures["serving_default"](question=tf.constant(["Who?"]), context=tf.constant(["Guido."]))
    """
    import tensorflow as tf

    archive = keras.export.ExportArchive()
    archive.track(model)

    def span_logits(inputs):
        outputs = model(inputs, training=False)
        return {name: ops.cast(outputs[name], "float32") for name in ("start_logits", "end_logits")}

    serve_token_ids = add_token_ids_endpoint(archive, model, "serve_token_ids", span_logits, jit_compile=jit_compile)
    preprocessor = model.preprocessor

    @tf.function(
        input_signature=[
            tf.TensorSpec((None,), tf.string, name="question"),
            tf.TensorSpec((None,), tf.string, name="context"),
        ]
    )
    def answer(question, context):
        features = preprocessor((question, context))
        logits = serve_token_ids(preprocessor.model_inputs(features))
        return model.best_spans(features, logits["start_logits"], logits["end_logits"], context)

    archive.add_endpoint("serving_default", answer)
    questions = lambda texts: [WARMUP_QUESTION] * len(texts)  # noqa: E731
    serving_inputs = lambda texts: {"question": questions(texts), "context": texts}  # noqa: E731
    model_inputs = lambda texts: preprocessor.model_inputs(preprocessor((questions(texts), texts)))  # noqa: E731
    write_saved_model(
        archive, filepath, warmup=(preprocessor, serving_inputs, model_inputs) if warmup else None, verbose=verbose
    )
