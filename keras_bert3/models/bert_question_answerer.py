"""BertQuestionAnswerer: BERT fine-tuned for extractive question answering (Devlin et al. 2019, section
4.2, SQuAD: start and end vectors over the passage tokens; as Hugging Face's `BertForQuestionAnswering`)."""

import warnings

import keras
import numpy as np

from keras_bert3.models.bert_backbone import BertBackbone
from keras_bert3.models.bert_task import BertTask
from keras_bert3.models.task_inputs import check_task_input
from keras_bert3.models.task_parts import HuggingFaceHead
from keras_bert3.models.task_parts import TaskSpec
from keras_bert3.models.task_parts import dense_head
from keras_bert3.models.task_parts import model_inputs
from keras_bert3.models.task_parts import task_preprocessor
from keras_bert3.preprocessing.question_answering_dataset import SQUAD_FIELDS
from keras_bert3.preprocessing.question_answering_dataset import check_questions_and_contexts
from keras_bert3.preprocessing.question_answering_preprocessor import QuestionAnsweringPreprocessor


@keras.saving.register_keras_serializable(package="keras_bert3")
class BertQuestionAnswerer(BertTask):
    """A `BertBackbone` with one dense layer giving start and end logits per token.

    `fit` and `evaluate` take SQuAD-style examples: a dict of lists `question`, `context`, `answer_text`, `answer_start`
    (the answer's first character in the context), or a list of such dicts. Each example becomes windows `[CLS] question
    [SEP] passage-window [SEP]`, labelled with the answer's start and end tokens, or [CLS] when the window does not hold
    it. `predict((questions, contexts))` returns each example's best answer over its windows; model inputs give
    `start_logits` and `end_logits`, float `(batch, seq)`. The loss is the sum of the start and end cross-entropies
    (Hugging Face: their mean). A Hugging Face `BertForQuestionAnswering` checkpoint loads with its head (`qa_outputs`).

    Args:
        tokenizer: the backbone's `BertTokenizer`, or instead `preprocessor`: a `QuestionAnsweringPreprocessor`.
        sequence_length: int. Tokens a window.
        doc_stride: int. Passage tokens shared by consecutive windows.
        max_query_length, max_answer_length: int. Question tokens kept; tokens an answer spans at most.
        null_threshold: float or None. None: every question gets a span (SQuAD v1.1). A number: a question is
            answered "" where its `null_score_diff` (no answer's score over the best span's, in logits) is over it
            (SQuAD v2.0; `keras-bert3 finetune` on a v2.0 file sets 0.0, or the best on its --validation file).
        n_best: int or None. None: every span is scored (Hugging Face's pipeline). A number: spans start and end
            among a window's `n_best` likeliest tokens (Hugging Face's `run_qa.py`, `n_best_size` 20).
        max_windows: int. Windows read per passage at most (the rest is not read).
        pad_to_multiple_of: int. Round the padded length up to a multiple of this.

    Example:
    >>> qa = BertQuestionAnswerer.from_preset("path/to/bert-squad", sequence_length=256)
    >>> qa.predict((["What does abs return?"], ["abs: Return the absolute value."]))[0]["answer"]
    'the absolute value'
    """

    preprocessor_cls = QuestionAnsweringPreprocessor
    spec = TaskSpec(
        saved_model_writer="export_question_answerer",  # keras_bert3.export.export_question_answerer
        raw_inputs=(
            "SQuAD-style examples for fit (a dict of lists question, context, answer_text, answer_start, or a "
            "list of such dicts), questions and their contexts for predict (lists of strings)"
        ),
        preset_settings=(
            "sequence_length",
            "doc_stride",
            "max_query_length",
            "max_windows",
            "pad_to_multiple_of",
            "max_answer_length",
            "null_threshold",
            "n_best",
        ),
        huggingface_head=HuggingFaceHead("BertForQuestionAnswering", prefix="qa_outputs.", layer="span_dense"),
        raw_dict_keys=SQUAD_FIELDS,
        onnx_head="span_head",  # keras_bert3.export.onnx_graph.span_head
        strings_front_end="question_context",
        job="keras_bert3.jobs.question_answerer_job:QuestionAnswererJob",
        command_name="question-answerer",
    )

    def __init__(
        self,
        backbone: BertBackbone,
        *,
        tokenizer=None,
        preprocessor: QuestionAnsweringPreprocessor | None = None,
        sequence_length: int = 384,
        doc_stride: int = 128,
        max_query_length: int = 64,
        max_windows: int = 48,
        pad_to_multiple_of: int = 16,
        max_answer_length: int = 15,
        null_threshold: float | None = None,
        n_best: int | None = None,
        **kwargs,
    ):
        preprocessor = task_preprocessor(
            type(self),
            backbone,
            preprocessor,
            tokenizer,
            sequence_length=sequence_length,
            doc_stride=doc_stride,
            max_query_length=max_query_length,
            max_windows=max_windows,
            pad_to_multiple_of=pad_to_multiple_of,
        )
        if int(max_answer_length) < 1:
            raise ValueError(f"max_answer_length={max_answer_length} must be at least 1.")

        # === Layers ===
        self.backbone = backbone
        self.preprocessor = preprocessor
        self.span_dense = dense_head(backbone, 2, name="span_logits")

        # === Functional graph ===
        inputs = model_inputs()
        sequence = backbone(inputs)["sequence_output"]  # (batch, seq, hidden)
        logits = self.span_dense(sequence)  # (batch, seq, 2)
        outputs = {"start_logits": logits[..., 0], "end_logits": logits[..., 1]}  # (batch, seq) each
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

        # === Config ===
        self.max_answer_length = int(max_answer_length)
        self.null_threshold = None if null_threshold is None else float(null_threshold)
        self.n_best = None if n_best is None else int(n_best)
        self.leave_pooler_out()  # As BertForQuestionAnswering: no pooler.
        self.compile()

    def default_loss(self):
        loss = keras.losses.SparseCategoricalCrossentropy
        return {"start_logits": loss(from_logits=True), "end_logits": loss(from_logits=True)}

    def default_metrics(self):
        accuracy = keras.metrics.SparseCategoricalAccuracy
        return {"start_logits": [accuracy(name="accuracy")], "end_logits": [accuracy(name="accuracy")]}

    # === SQuAD examples in ===

    def preprocess(self, x, y=None, sample_weight=None, *, batch_size=32, shuffle=False, keep_order=False):
        """A tf.data pipeline of windows of model inputs and their labels (`question_answering_dataset`),
        in the examples' order unless `shuffle` (so `keep_order` asks nothing more)."""
        from keras_bert3.preprocessing.question_answering_dataset import question_answering_dataset

        if y is not None or sample_weight is not None:
            raise ValueError("Pass the answers inside x (answer_text, answer_start), not as y or sample_weight.")
        return question_answering_dataset(
            x, preprocessor=self.preprocessor, batch_size=batch_size, shuffle=shuffle, seed=0
        )

    def predict(self, x, *args, **kwargs):
        """Answers: `predict((questions, contexts))` -> one dict per example, with Keras' other arguments.

        Each answer is `{"answer": str, "start": int, "end": int, "score": float, "null_score_diff": float}` with
        `context[start:end] == answer` (characters), score the pipeline's `p_start * p_end` and `null_score_diff`
        how much no answer outscores the best span (log of their scores; "" is answered where it is over
        `null_threshold`).
        Model inputs (or a dataset of them) give the raw `start_logits` and `end_logits` instead.
        `predict(questions, contexts)` (or `contexts=`) is deprecated: it works, with a `DeprecationWarning`.
        """
        contexts = kwargs.pop("contexts", None)
        if args and args[0] is not None and not isinstance(args[0], int):  # The old second argument.
            contexts, args = args[0], args[1:]
        if contexts is not None:
            warnings.warn(
                "BertQuestionAnswerer.predict(questions, contexts) is deprecated and will be removed in the next "
                "release: pass predict((questions, contexts)), as Keras' predict(x, batch_size) reads its arguments.",
                DeprecationWarning,
                stacklevel=2,
            )
            check_task_input(self, x, "predict")  # The questions, as `x` alone would be.
            x = (x, contexts)
        return super().predict(x, *args, **kwargs)

    def predict_examples(self, x, run) -> list[dict]:
        """The best answer of each example over its windows (`best_spans`), as a
        dict: the windows of `(questions, contexts)` tokenized in one call and `run`."""
        questions, contexts = x if isinstance(x, tuple) and len(x) == 2 else (x, None)  # Without contexts: refused.
        questions, contexts = check_questions_and_contexts(questions, contexts, allow_empty=True)  # Answered "".
        if not questions:
            return []
        features = self.preprocessor((questions, contexts))
        logits = run({name: np.asarray(value) for name, value in self.preprocessor.model_inputs(features).items()})
        spans = self.best_spans(features, logits["start_logits"], logits["end_logits"], contexts)
        keys = ("answer", "start", "end", "score", "null_score_diff")
        return [
            {
                "answer": answer.decode("utf-8"),
                "start": int(start),
                "end": int(end),
                "score": float(score),
                "null_score_diff": float(diff),
            }
            for answer, start, end, score, diff in zip(*(np.asarray(spans[k]) for k in keys))
        ]

    def best_spans(self, features, start_logits, end_logits, contexts) -> dict:
        """The best span of each example (see `QuestionAnsweringPreprocessor.best_spans`)."""
        return self.preprocessor.best_spans(
            features,
            start_logits,
            end_logits,
            contexts,
            max_answer_length=self.max_answer_length,
            null_threshold=self.null_threshold,
            n_best=self.n_best,
        )
