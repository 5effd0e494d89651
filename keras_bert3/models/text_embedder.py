"""TextEmbedder: raw texts in, BERT vectors out (the feature-based use of BERT, Devlin et al. 2019, 5.3)."""

import keras
import numpy as np

from keras_bert3.models.bert_backbone import check_vocabulary_sizes

OUTPUTS = ("pooled", "cls", "mean", "tokens")


class TextEmbedder:
    """Embeds texts with a BERT backbone and its tokenizer.

    Args:
        backbone, tokenizer: a `BertBackbone` and the `BertTokenizer` of the same model.
        output: what to return per text: "pooled" (the tanh pooler on [CLS]), "cls" (the hidden state
            of [CLS]), "mean" (the mean over real tokens, as sentence-transformers models) or "tokens"
            (every token's hidden state `(tokens, hidden)`, [CLS] and [SEP] included).
        hidden_layers: the hidden states, concatenated, for "cls", "mean" and "tokens": 0 is the
            embedding output, 1..L the blocks, negative counts from the top (the paper's best
            feature-based choice: `(-4, -3, -2, -1)`).
        normalize: bool. Scale each vector to unit L2 norm.
        sequence_length, batch_size: int. Longer texts are truncated; texts per forward pass.

    Example:
    >>> embedder = TextEmbedder.from_preset("path/to/all-MiniLM-L6-v2", output="mean", normalize=True)
    >>> embedder.embed(["A sentence.", "Another one."]).shape
    (2, 384)
    """

    def __init__(
        self,
        backbone,
        tokenizer,
        *,
        output: str = "pooled",
        hidden_layers: tuple[int, ...] = (-1,),
        normalize: bool = False,
        sequence_length: int = 128,
        batch_size: int = 32,
    ):
        if output not in OUTPUTS:
            raise ValueError(f"output={output!r}; choose one of {OUTPUTS}.")
        if sequence_length > backbone.max_sequence_length:
            raise ValueError(
                f"sequence_length={sequence_length} exceeds the backbone's {backbone.max_sequence_length} positions."
            )
        check_vocabulary_sizes(backbone, tokenizer)
        self.backbone = backbone
        self.tokenizer = tokenizer
        self.output = output
        self.hidden_layers = tuple(hidden_layers)
        self.normalize = normalize
        self.sequence_length = sequence_length
        self.batch_size = batch_size
        # All hidden states: embeddings, then each block, as in Hugging Face.
        states = [backbone.embeddings.output] + [block.output for block in backbone.encoder_blocks]
        for index in self.hidden_layers:
            if not -len(states) <= index < len(states):
                raise ValueError(
                    f"hidden_layers has {index}, but this backbone has hidden "
                    f"states 0..{len(states) - 1} (or -{len(states)}..-1)."
                )
        self._features = keras.Model(
            backbone.input,
            {
                "pooled": backbone.output["pooled_output"],
                "hidden": [states[i] for i in self.hidden_layers],
            },
        )

    @classmethod
    def from_preset(cls, preset: str, **kwargs) -> "TextEmbedder":
        """Loads the backbone and tokenizer of `preset` (see `BertBackbone.from_preset`)."""
        from keras_bert3.models.bert_backbone import BertBackbone
        from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer

        return cls(BertBackbone.from_preset(preset), BertTokenizer.from_preset(preset), **kwargs)

    def embed(self, texts, pairs=None):
        """Returns `(len(texts), dim)` floats, or for output "tokens" a list of
        `(tokens, dim)` arrays. `pairs` embeds sentence pairs (segment B)."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of texts; wrap a single text in a list.")
        texts = list(texts)
        results = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            batch_pairs = None if pairs is None else list(pairs[start : start + self.batch_size])
            results.extend(self._embed_batch(batch, batch_pairs))
        if self.output == "tokens":
            return results
        if not results:
            return np.zeros((0, self._dimension()), "float32")
        return np.stack(results)

    def _dimension(self) -> int:
        if self.output == "pooled":
            return self.backbone.hidden_dim
        return self.backbone.hidden_dim * len(self.hidden_layers)

    def _embed_batch(self, texts, pairs):
        model_inputs = self.tokenizer.join_segments(texts, pairs, sequence_length=self.sequence_length)
        model_inputs = {key: np.asarray(value) for key, value in model_inputs.items()}
        # Drop the columns that are padding in every row.
        longest = int(model_inputs["padding_mask"].sum(axis=1).max())
        inputs = {key: value[:, :longest] for key, value in model_inputs.items()}
        features = self._features.predict_on_batch(inputs)
        mask = inputs["padding_mask"].astype("float32")[:, :, None]
        if self.output == "pooled":
            vectors = np.asarray(features["pooled"])
        else:
            hidden = np.concatenate([np.asarray(h) for h in features["hidden"]], axis=-1)
            if self.output == "cls":
                vectors = hidden[:, 0]
            elif self.output == "mean":
                vectors = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
            else:
                vectors = hidden
        if self.normalize:
            norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
            vectors = vectors / np.maximum(norms, 1e-12)
        if self.output == "tokens":
            lengths = inputs["padding_mask"].sum(axis=1)
            return [vectors[i, : lengths[i]] for i in range(len(texts))]
        return list(vectors)
