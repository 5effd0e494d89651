"""SavedModels that fill the [MASK]s of strings, the tokenizer and the vocabulary in the graph."""

import keras
from keras import ops

from keras_bert3.export.saved_model_export import add_token_ids_endpoint
from keras_bert3.export.saved_model_export import trim_for_serving
from keras_bert3.export.saved_model_export import write_saved_model
from keras_bert3.preprocessing.bert_text_preprocessor import INPUT_NAMES

MASK_INPUTS = INPUT_NAMES + ("mask_positions",)


def export_masked_lm(
    model, filepath: str, *, verbose: bool = False, warmup: bool = True, jit_compile: bool = False
) -> None:
    """Writes `model` (a `BertMaskedLM`) as a SavedModel.

    - `serving_default`: `text` (string `(batch,)`); returns, for each text's [MASK]s in order (`(batch, masks,
      top_k)`, masks padded to the text with most): `tokens` (strings), `token_ids` (int32) and `scores` (float32,
      the softmax over the vocabulary), and `mask_count` (int32 `(batch,)`: how many rows of each text are real).
    - `serve_token_ids`: int32 `(batch, seq)` `token_ids`, `segment_ids`, `padding_mask` and `(batch, masks)`
      `mask_positions`; returns float32 `logits` `(batch, masks, vocabulary)`.

    Loading needs `import tensorflow_text` first.

    Example:
    >>> fill.export("serving/1")
    >>> serve = tf.saved_model.load("serving/1").signatures["serving_default"]  # After `import tensorflow_text`.
    >>> serve(text=tf.constant(["The capital of France is [MASK]."]))["tokens"][0, 0, 0]
    """
    import tensorflow as tf

    archive = keras.export.ExportArchive()
    archive.track(model)

    def logits(inputs):
        return {"logits": ops.cast(model(inputs, training=False), "float32")}

    options = {"jit_compile": jit_compile, "axes": {"mask_positions": "(batch, masks)"}}
    serve_token_ids = add_token_ids_endpoint(archive, model, "serve_token_ids", logits, MASK_INPUTS, **options)
    preprocessor = model.preprocessor
    vocabulary = tf.constant(preprocessor.tokenizer.get_vocabulary())
    mask_id = preprocessor.tokenizer.mask_token_id

    def with_mask_positions(inputs):
        is_mask = tf.equal(inputs["token_ids"], mask_id)
        columns = tf.broadcast_to(tf.range(tf.shape(is_mask)[1]), tf.shape(is_mask))
        positions = tf.ragged.boolean_mask(columns, is_mask)
        dense = positions.to_tensor(0)  # (batch, most masks): at least one column, so that no tensor is empty.
        dense = tf.pad(dense, [[0, 0], [0, tf.maximum(1 - tf.shape(dense)[1], 0)]])
        return inputs | {"mask_positions": tf.cast(dense, tf.int32)}, tf.cast(positions.row_lengths(), tf.int32)

    @tf.function(input_signature=[tf.TensorSpec((None,), tf.string, name="text")])
    def fill(text):
        inputs, counts = with_mask_positions(trim_for_serving(preprocessor(text), jit_compile))
        scores, ids = tf.math.top_k(tf.nn.softmax(serve_token_ids(inputs)["logits"], axis=-1), k=model.top_k)
        return {"tokens": tf.gather(vocabulary, ids), "token_ids": ids, "scores": scores, "mask_count": counts}

    archive.add_endpoint("serving_default", fill)
    mask = lambda texts: [f"{preprocessor.tokenizer.mask_token} {text}" for text in texts]  # noqa: E731
    serving_inputs = lambda texts: {"text": mask(texts)}  # noqa: E731
    model_inputs = lambda texts: with_mask_positions(preprocessor(mask(texts)))[0]  # noqa: E731
    write_saved_model(
        archive,
        filepath,
        warmup=(preprocessor, serving_inputs, model_inputs, MASK_INPUTS) if warmup else None,
        verbose=verbose,
        task=model,
    )
