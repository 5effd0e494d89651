"""SavedModels that classify strings, the tokenizer in the graph (TensorFlow core and tf-text ops)."""

import keras
from keras import ops

from keras_bert3.export.saved_model_export import add_token_ids_endpoint
from keras_bert3.export.saved_model_export import trim_for_serving
from keras_bert3.export.saved_model_export import write_saved_model


def export_text_classifier(
    model, filepath: str, *, verbose: bool = False, warmup: bool = True, jit_compile: bool = False
) -> None:
    """Writes `model` (a `BertClassifier`, or any task of one output row per text) as a SavedModel.

    - `serving_default`: `text` (string `(batch,)`), and `text_pair` for pair models; returns the
      task's `serving_outputs` (a classifier's float32 `(batch, num_classes)` `logits` and
      `probabilities`). Invalid UTF-8 is replaced; empty and overlong strings are fine.
    - `serve_token_ids`: int32 `(batch, seq)` `token_ids`, `segment_ids`, `padding_mask`.

    `warmup`: TF Serving warm-up records in `assets.extra/`. `jit_compile`: the model (only) runs
    compiled by XLA (`add_token_ids_endpoint`). Loading needs `import tensorflow_text` first.

    Example:
    >>> classifier.export("serving/1")
    >>> reloaded = tf.saved_model.load("serving/1")  # After `import tensorflow_text`.
    >>> reloaded.signatures["serving_default"](text=tf.constant(["Some text."]))["probabilities"]
    """
    import tensorflow as tf

    archive = keras.export.ExportArchive()
    archive.track(model)

    def classify(inputs):
        return model.serving_outputs(ops.cast(model(inputs, training=False), "float32"))

    serve_token_ids = add_token_ids_endpoint(archive, model, "serve_token_ids", classify, jit_compile=jit_compile)
    preprocessor = model.preprocessor

    if preprocessor.sentence_pairs:

        @tf.function(
            input_signature=[
                tf.TensorSpec((None,), tf.string, name="text"),
                tf.TensorSpec((None,), tf.string, name="text_pair"),
            ]
        )
        def serve_text(text, text_pair):
            return serve_token_ids(trim_for_serving(preprocessor((text, text_pair)), jit_compile))

    else:

        @tf.function(input_signature=[tf.TensorSpec((None,), tf.string, name="text")])
        def serve_text(text):
            return serve_token_ids(trim_for_serving(preprocessor(text), jit_compile))

    archive.add_endpoint("serving_default", serve_text)
    if preprocessor.sentence_pairs:  # The shortest text as every second segment.
        serving_inputs = lambda texts: {"text": texts, "text_pair": texts[:1] * len(texts)}  # noqa: E731
        model_inputs = lambda texts: preprocessor((texts, texts[:1] * len(texts)))  # noqa: E731
    else:
        serving_inputs, model_inputs = (lambda texts: {"text": texts}), preprocessor
    write_saved_model(
        archive,
        filepath,
        warmup=(preprocessor, serving_inputs, model_inputs) if warmup else None,
        verbose=verbose,
        task=model,
    )
