"""QuestionAnsweringPreprocessor: question and passage strings to BERT windows `[CLS] question [SEP] passage-window
[SEP]` (Devlin et al. 2019, section 4.2), their answer labels, and the best answer span back, as Hugging Face's
question-answering pipeline (`return_overflowing_tokens=True, stride=doc_stride, truncation="only_second"`)."""

import keras
import tensorflow as tf

from keras_bert3.preprocessing.bert_text_preprocessor import INPUT_NAMES
from keras_bert3.preprocessing.task_preprocessor import TaskPreprocessor
from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer

MASKED_LOGIT = -10000.0  # As the pipeline: exp(-10000 - max) is exactly 0 in float32.
TINY = 1e-30  # Added to probabilities before their logs (a probability of 0 gives a large, finite log).


@keras.saving.register_keras_serializable(package="keras_bert3")
class QuestionAnsweringPreprocessor(TaskPreprocessor):
    """Splits (question, passage) pairs into windows with a document stride.

    The question is cut to `max_query_length` tokens (as google-research/bert `run_squad.py`); the passage fills the
    rest of each window, and passage tokens beyond `max_windows` windows are dropped. Offsets are characters of the
    original passage.

    Args:
        sequence_length: int. Tokens a window (the pipeline's `max_seq_len`).
        doc_stride: int. Passage tokens shared by consecutive windows.
        pad_to_multiple_of: int. Round the padded length up to a multiple of this.

    Call args:
        inputs: a tuple `(questions, contexts)` of `(batch,)` strings.

    Returns:
        dict of int32 `(windows, length)`: `token_ids`, `segment_ids`,
        `padding_mask`, `token_start`, `token_end`, `word_start`, `word_end`
        (passage characters of the token or its word, -1 off the passage);
        and `example_index` `(windows,)`, each window's input example.

    Examples:
    ```python
    preprocessor = QuestionAnsweringPreprocessor(tokenizer, sequence_length=384, doc_stride=128)
    windows = preprocessor((["What does it return?"], [long_passage]))
    windows["token_ids"].shape  # (3, 384): three windows of the one example.
    labels = preprocessor.labels(windows, answer_starts=[120], answer_ends=[141])
    ```
    """

    def __init__(
        self,
        tokenizer: BertTokenizer,
        *,
        sequence_length: int = 384,
        doc_stride: int = 128,
        max_query_length: int = 64,
        max_windows: int = 48,
        pad_to_multiple_of: int = 16,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if doc_stride < 0 or max_query_length < 1 or max_windows < 1 or pad_to_multiple_of < 1:
            raise ValueError(
                f"doc_stride={doc_stride} must be >= 0, max_query_length={max_query_length}, "
                f"max_windows={max_windows} and pad_to_multiple_of={pad_to_multiple_of} >= 1."
            )
        if sequence_length - 3 - max_query_length <= doc_stride:
            raise ValueError(
                f"sequence_length={sequence_length} leaves {sequence_length - 3 - max_query_length} passage "
                f"tokens a window after a question of max_query_length={max_query_length} tokens, not more "
                f"than doc_stride={doc_stride}: windows would not advance. Use a longer sequence_length, "
                "or a smaller doc_stride or max_query_length."
            )
        self.tokenizer = tokenizer
        self.sequence_length = int(sequence_length)
        self.doc_stride = int(doc_stride)
        self.max_query_length = int(max_query_length)
        self.max_windows = int(max_windows)
        self.pad_to_multiple_of = int(pad_to_multiple_of)
        self.built = True

    def call(self, inputs) -> dict[str, tf.Tensor]:
        if not (isinstance(inputs, (tuple, list)) and len(inputs) == 2):
            raise ValueError("QuestionAnsweringPreprocessor takes a tuple (questions, contexts).")
        questions, contexts = (tf.convert_to_tensor(x, dtype=tf.string) for x in inputs)
        tokenizer = self.tokenizer
        question_ids = tokenizer.tokenize(questions)[:, : self.max_query_length]  # (batch, None)
        passage = tokenizer.tokenize_with_offsets(contexts, word_offsets=True)  # 5 x (batch, None)
        question_length = question_ids.row_lengths()
        passage_length = passage[0].row_lengths()
        budget = self.sequence_length - 3 - question_length  # Passage tokens a window.
        step = budget - self.doc_stride
        overflow = tf.maximum(passage_length - budget, 0)
        num_windows = tf.minimum(1 + (overflow + step - 1) // step, self.max_windows)  # (batch,)
        example_index = tf.repeat(tf.range(tf.size(num_windows, out_type=tf.int64)), num_windows)  # (windows,)
        window_number = tf.ragged.range(num_windows).flat_values
        first = window_number * tf.gather(step, example_index)
        length = tf.minimum(tf.gather(budget, example_index), tf.gather(passage_length, example_index) - first)
        base = tf.gather(passage[0].row_splits, example_index) + first
        positions = tf.ragged.range(base, base + length)  # (windows, None): indices into flat passage tokens.

        def window_values(values):
            return tf.gather(values.flat_values, positions)

        question = tf.gather(question_ids, example_index)  # (windows, None)
        windows = tf.shape(example_index, out_type=tf.int64)[:1]
        ones = tf.RaggedTensor.from_tensor(tf.ones(tf.concat([windows, [1]], 0), tf.int32))
        passage_ids = window_values(passage[0])
        zeros = ones * 0
        ids = tf.concat(
            [
                ones * tokenizer.cls_token_id,
                question,
                ones * tokenizer.sep_token_id,
                passage_ids,
                ones * tokenizer.sep_token_id,
            ],
            axis=1,
        )
        segments = tf.concat([zeros, question * 0, zeros, passage_ids * 0 + 1, ones], axis=1)
        off_passage = tf.concat([zeros - 1, question * 0 - 1, zeros - 1], axis=1)
        longest = tf.reduce_max(tf.concat([ids.row_lengths(), [1]], 0))
        multiple = self.pad_to_multiple_of
        padded = tf.minimum((longest + multiple - 1) // multiple * multiple, self.sequence_length)
        shape = [None, self.sequence_length]  # Then cut to `padded` (a graph tensor).
        features = {
            "token_ids": ids.to_tensor(tokenizer.pad_token_id, shape=shape),
            "segment_ids": segments.to_tensor(0, shape=shape),
            "padding_mask": tf.ones_like(ids).to_tensor(0, shape=shape),
            "example_index": tf.cast(example_index, tf.int32),
        }
        for name, values in zip(("token_start", "token_end", "word_start", "word_end"), passage[1:]):
            offsets = tf.concat([off_passage, window_values(values), ones * -1], axis=1)
            features[name] = offsets.to_tensor(-1, shape=shape)
        return {name: value if name == "example_index" else value[:, :padded] for name, value in features.items()}

    def labels(self, features: dict, answer_starts, answer_ends) -> tuple[tf.Tensor, tf.Tensor]:
        """Start and end token positions, int32 `(windows,)`, of answers at characters
        `[answer_starts, answer_ends)` `(batch,)`, as Hugging Face's `prepare_train_features`;
        a window without the whole answer points at [CLS] (0)."""
        index = features["example_index"]
        answer_start = tf.gather(tf.cast(answer_starts, tf.int32), index)[:, None]
        answer_end = tf.gather(tf.cast(answer_ends, tf.int32), index)[:, None]
        token_start, token_end = features["token_start"], features["token_end"]
        passage = token_start >= 0  # (windows, length)
        first_passage = tf.argmax(tf.cast(passage, tf.int32), axis=1, output_type=tf.int32)

        def count(mask):  # Passage tokens of each window where `mask` holds.
            return tf.reduce_sum(tf.cast(passage & mask, tf.int32), axis=1)

        window_first = tf.reduce_min(tf.where(passage, token_start, tf.int32.max), axis=1)
        window_last = tf.reduce_max(tf.where(passage, token_end, -1), axis=1)
        holds = (window_first <= answer_start[:, 0]) & (window_last >= answer_end[:, 0])
        start = tf.where(holds, first_passage + count(token_start <= answer_start) - 1, 0)
        end = tf.where(holds, first_passage + count(token_end < answer_end), 0)
        return start, end

    def best_spans(
        self,
        features: dict,
        start_logits,
        end_logits,
        contexts,
        *,
        max_answer_length: int = 15,
        null_threshold: float | None = None,
        n_best: int | None = None,
    ) -> dict:
        """The best answer of each example over all its windows.

        As Hugging Face's pipeline (`select_starts_ends`, `decode_spans`, `align_to_words=True`): a span scores `p_start
        * p_end` (softmax over the window and [CLS], off-passage masked), `start <= end < start + max_answer_length`;
        the best wins (the first on ties), expanded to whole words; with `n_best`, as `run_qa.py` (`n_best_size`), only
        spans from and to tokens among the window's `n_best` highest start and end logits. No answer (SQuAD v2.0, the
        paper's section 4.3) scores `p_start * p_end` at [CLS], the least over the example's windows; `null_score_diff`
        is the log of that over the best span's (`s_null - s_span` of the logits). Over a `null_threshold`: answered "".

        `start_logits`, `end_logits`: float `(windows, length)`; `contexts`: the passages given to `call`. Returns a
        dict of `(batch,)` `answer` strings, `start`, `end` int32 characters (`context[start:end] == answer`), float32
        `score` (0 and "" without passage tokens; the null one where answered "") and `null_score_diff`."""
        passage = features["token_start"] >= 0  # (windows, length)
        length = tf.shape(passage)[1]
        is_cls = tf.range(length)[None, :] == 0

        def with_cls(logits):  # Softmax over the passage and [CLS].
            return tf.nn.softmax(tf.where(passage | is_cls, tf.cast(logits, tf.float32), MASKED_LOGIT), axis=-1)

        start_all, end_all = with_cls(start_logits), with_cls(end_logits)
        start_p, end_p = tf.where(is_cls, 0.0, start_all), tf.where(is_cls, 0.0, end_all)

        starts, ends = (_span_ends(passage, x, features["padding_mask"], n_best) for x in (start_logits, end_logits))
        scores, valid = [], []
        for k in range(max_answer_length):  # The span (t, t + k).
            scores.append(start_p * _shifted(end_p, k, 0.0))
            valid.append(starts & _shifted(ends, k, False))
        scores = tf.where(tf.stack(valid, axis=2), tf.stack(scores, axis=2), -1.0)  # (windows, length, k)
        flat = tf.reshape(scores, [tf.shape(scores)[0], -1])
        best = tf.argmax(flat, axis=1, output_type=tf.int32)  # First maximum: start-major, then shortest.
        window_score = tf.reduce_max(flat, axis=1)
        index = features["example_index"]
        num_examples = tf.shape(contexts)[0]
        example_score = tf.math.unsorted_segment_max(window_score, index, num_examples)
        window_ids = tf.range(tf.shape(index)[0])
        is_best = tf.equal(window_score, tf.gather(example_score, index))
        window = tf.math.unsorted_segment_min(tf.where(is_best, window_ids, tf.int32.max), index, num_examples)
        span = tf.gather(best, window)
        start_token = span // max_answer_length
        end_token = start_token + span % max_answer_length
        score = tf.gather(example_score, tf.range(num_examples))
        null, null_score_diff, unanswered = no_answer(start_all, end_all, index, score, null_threshold)
        found = (score >= 0.0) & ~unanswered

        def take(name, token):  # features[name][window, token] for each example.
            return tf.gather_nd(features[name], tf.stack([window, token], 1))

        start = tf.where(found, take("word_start", start_token), 0)
        end = tf.where(found, take("word_end", end_token), 0)
        characters = tf.strings.unicode_decode(contexts, "UTF-8", errors="replace")  # (batch, chars)
        base = tf.cast(characters.row_splits[:-1], tf.int32)
        answer = tf.gather(characters.flat_values, tf.ragged.range(base + start, base + end))
        return {
            "answer": tf.strings.unicode_encode(answer, "UTF-8"),
            "start": start,
            "end": end,
            "score": tf.where(found, score, tf.where(unanswered, null, 0.0)),
            "null_score_diff": null_score_diff,
        }

    def model_inputs(self, features: dict) -> dict:
        """The BERT model inputs of `features` (drops offsets and indices)."""
        return {name: features[name] for name in INPUT_NAMES}

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(
            {
                "sequence_length": self.sequence_length,
                "doc_stride": self.doc_stride,
                "max_query_length": self.max_query_length,
                "max_windows": self.max_windows,
                "pad_to_multiple_of": self.pad_to_multiple_of,
            }
        )
        return config


def no_answer(start_probabilities, end_probabilities, example_index, score, null_threshold):
    """Each example's no-answer score (`p_start * p_end` at [CLS], the least over its windows), its
    `null_score_diff` over the best span's `score` (log of their ratio), and whether it is answered "" (a span was
    found and the diff is over `null_threshold`; never where that is None)."""
    windows_null = start_probabilities[:, 0] * end_probabilities[:, 0]
    null = tf.math.unsorted_segment_min(windows_null, example_index, tf.shape(score)[0])
    null_score_diff = tf.math.log(null + TINY) - tf.math.log(tf.maximum(score, 0.0) + TINY)
    over = null_score_diff > null_threshold if null_threshold is not None else tf.zeros_like(score, tf.bool)
    return null, null_score_diff, over & (score >= 0.0)


def _shifted(x, k: int, fill):
    """`x[:, t + k]` at `t` (`fill` past the end, also where k > length)."""
    return tf.pad(x, [[0, 0], [0, k]], constant_values=fill)[:, k:]


def _span_ends(passage, logits, padding_mask, n: int | None):
    """Where spans may start (or end, for end logits): the passage, and where `n` is given, among its window's `n`
    highest logits over its real tokens (ties at the n-th in): bool `(windows, length)`."""
    if n is None:
        return passage
    logits = tf.where(tf.cast(padding_mask, tf.bool), tf.cast(logits, tf.float32), float("-inf"))
    n = tf.minimum(n, tf.shape(logits)[1])
    nth = tf.math.top_k(logits, k=n).values[:, -1:]
    return passage & (logits >= nth)
