"""SavedModels that tag the words of strings: a token classifier with its
tokenizer and word alignment inside the graph (TensorFlow core and tf-text ops)."""

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

    - `serving_default`: `text`, string `(batch,)`. Each string is split into
      words at ASCII whitespace (invalid UTF-8 replaced first), the words are
      tokenized in the graph. Returns per token `logits` and
      `probabilities`, float32 `(batch, length, num_labels)`, and per word:
      `words` (string `(batch, max_words)`, "" for padding), `num_words`
      (int32 `(batch,)`), `word_positions` (int32 `(batch, max_words)`: the
      index of the word's first token in `logits`), `word_labels` (int32
      `(batch, max_words)`: the argmax) and `word_probabilities` (float32
      `(batch, max_words, num_labels)`). Padding, and words with no token in
      the sequence (beyond the model's `sequence_length`, or tokenizing to
      nothing), have position and label -1 and zero probabilities.
    - `serve_token_ids`: int32 `(batch, length)` `token_ids`, `segment_ids`,
      `padding_mask`; returns `logits` and `probabilities`.

    With `warmup`, TF Serving warm-up records of real text for both
    signatures go to `assets.extra/` (`write_warmup_requests`). With
    `jit_compile`, the model (not the tokenizer) runs compiled by XLA, see
    `add_token_ids_endpoint` for the server's flag.

    On JAX the model is converted with jax2tf (shape-polymorphic in batch and
    length); on TensorFlow it is traced directly. Loading needs
    `import tensorflow_text` before `tf.saved_model.load`.

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
    )
