"""SavedModels that tag the words of strings, tokenizer and word alignment in the graph."""

import keras
from keras import ops

from keras_bert3.export.saved_model_export import add_token_ids_endpoint
from keras_bert3.export.saved_model_export import trim_for_serving
from keras_bert3.export.saved_model_export import write_saved_model
from keras_bert3.preprocessing.bert_text_preprocessor import INPUT_NAMES


def export_token_classifier(
    model, filepath: str, *, verbose: bool = False, warmup: bool = True, jit_compile: bool = False
) -> None:
    """Writes `model` (a `BertTokenClassifier`) as a SavedModel with two signatures.

    - `serving_default`: `text`, string `(batch,)`, split into words at ASCII whitespace. Returns per
      token float32 `logits`, `probabilities`, and per word `words` (string `(batch, max_words)`),
      `num_words`, `word_positions` (the first token), `word_labels`, `word_probabilities`
      (padding, and words with no token in the sequence: position and label -1, zero probabilities).
    - `serve_token_ids`: int32 `(batch, length)` `token_ids`, `segment_ids`, `padding_mask`.

    `warmup`: TF Serving warm-up records in `assets.extra/`. `jit_compile`: the model (only) runs
    compiled by XLA (`add_token_ids_endpoint`). Loading needs `import tensorflow_text` first.

    Example:
    >>> tagger.export("serving/1")
    >>> reloaded = tf.saved_model.load("serving/1")  # After `import tensorflow_text`.
    >>> out = reloaded.signatures["serving_default"](text=tf.constant(["Call os.walk first."]))
    >>> out["words"], out["word_labels"]  # [[b"Call", b"os.walk", b"first."]], [[0, 1, 0]]
    """
    import tensorflow as tf

    from keras_bert3.preprocessing.word_piece_alignment import gather_words

    archive = keras.export.ExportArchive()
    archive.track(model)

    def tag(inputs):
        logits = ops.cast(model(inputs, training=False), "float32")  # (batch, length, num_labels)
        return {"logits": logits, "probabilities": ops.softmax(logits, axis=-1)}

    serve_token_ids = add_token_ids_endpoint(archive, model, "serve_token_ids", tag, jit_compile=jit_compile)
    preprocessor = model.preprocessor

    @tf.function(input_signature=[tf.TensorSpec((None,), tf.string, name="text")])
    def serve_text(text):
        words = preprocessor.as_words(text)  # (batch, None)
        model_inputs = trim_for_serving(preprocessor(words), jit_compile, keep=("word_positions",))
        outputs = dict(serve_token_ids({name: model_inputs[name] for name in INPUT_NAMES}))
        positions = model_inputs["word_positions"]  # (batch, max_words)
        word_probabilities = gather_words(outputs["probabilities"], positions)
        outputs.update(
            words=words.to_tensor(""),
            num_words=tf.cast(words.row_lengths(), tf.int32),
            word_positions=positions,
            word_labels=tf.where(positions >= 0, tf.argmax(word_probabilities, axis=-1, output_type=tf.int32), -1),
            word_probabilities=word_probabilities,
        )
        return outputs

    archive.add_endpoint("serving_default", serve_text)
    model_inputs = lambda texts: preprocessor(preprocessor.as_words(texts))  # noqa: E731
    write_saved_model(
        archive,
        filepath,
        warmup=(preprocessor, lambda texts: {"text": texts}, model_inputs) if warmup else None,
        verbose=verbose,
        task=model,
    )
