"""SavedModels that choose among strings, the tokenizer in the graph (TensorFlow core and tf-text ops)."""

import keras
from keras import ops

from keras_bert3.export.saved_model_export import add_token_ids_endpoint
from keras_bert3.export.saved_model_export import trim_for_serving
from keras_bert3.export.saved_model_export import write_saved_model


def export_multiple_choice(
    model, filepath: str, *, verbose: bool = False, warmup: bool = True, jit_compile: bool = False
) -> None:
    """Writes `model` (a `BertMultipleChoice`) as a SavedModel.

    - `serving_default`: `context` (string `(batch,)`) and `choices` (string `(batch, choices)`; a question goes
      before each choice, as `predict` joins it); returns float32 `(batch, choices)` `logits` and `probabilities`.
    - `serve_token_ids`: int32 `(batch, choices, seq)` `token_ids`, `segment_ids`, `padding_mask`.

    `warmup`: TF Serving warm-up records in `assets.extra/`. `jit_compile`: the model (only) runs compiled by XLA.
    Loading needs `import tensorflow_text` first.

    Example:
    >>> chooser.export("serving/1")
    >>> serve = tf.saved_model.load("serving/1").signatures["serving_default"]  # After `import tensorflow_text`.
    >>> serve(context=tf.constant(["She opened the door."]), choices=tf.constant([["It rained.", "She went in."]]))
    """
    import tensorflow as tf

    archive = keras.export.ExportArchive()
    archive.track(model)

    def choose(inputs):
        return model.serving_outputs(ops.cast(model(inputs, training=False), "float32"))

    serve_token_ids = add_token_ids_endpoint(
        archive, model, "serve_token_ids", choose, jit_compile=jit_compile, choices=True
    )
    preprocessor = model.preprocessor

    @tf.function(
        input_signature=[
            tf.TensorSpec((None,), tf.string, name="context"),
            tf.TensorSpec((None, None), tf.string, name="choices"),
        ]
    )
    def serve_text(context, choices):
        return serve_token_ids(trim_for_serving(preprocessor((context, choices)), jit_compile))

    archive.add_endpoint("serving_default", serve_text)
    two_choices = lambda texts: [[text, texts[0]] for text in texts]  # noqa: E731  (the shortest as the second)
    serving_inputs = lambda texts: {"context": texts, "choices": two_choices(texts)}  # noqa: E731
    model_inputs = lambda texts: preprocessor((texts, two_choices(texts)))  # noqa: E731
    write_saved_model(
        archive,
        filepath,
        warmup=(preprocessor, serving_inputs, model_inputs) if warmup else None,
        verbose=verbose,
        task=model,
    )
