"""SavedModels that answer questions from strings, windows and span decoding in the graph."""

import keras
from keras import ops

from keras_bert3.export.saved_model_export import add_token_ids_endpoint
from keras_bert3.export.saved_model_export import write_saved_model

WARMUP_QUESTION = "What does this function return?"


def export_question_answerer(
    model, filepath: str, *, verbose: bool = False, warmup: bool = True, jit_compile: bool = False
) -> None:
    """Writes `model` (a `BertQuestionAnswerer`) as a SavedModel with two signatures.

    - `serving_default`: `question` and `context`, strings `(batch,)`; returns `answer` (string),
      `start` and `end` (int32 character offsets: `context[start:end] == answer`) and `score`
      (float32) and `null_score_diff` (float32), each `(batch,)`, as `model.predict` (its `null_threshold` kept). At most `max_windows` windows a passage (the
      rest is dropped); empty strings give "" with score 0; invalid UTF-8 is replaced.
    - `serve_token_ids`: int32 `(windows, seq)` `token_ids`, `segment_ids`, `padding_mask`;
      returns float32 `start_logits` and `end_logits`.

    `warmup`: TF Serving warm-up records in `assets.extra/`. `jit_compile`: the model (only) runs
    compiled by XLA (`add_token_ids_endpoint`). Loading needs `import tensorflow_text` first.

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
        archive,
        filepath,
        warmup=(preprocessor, serving_inputs, model_inputs) if warmup else None,
        verbose=verbose,
        task=model,
    )
