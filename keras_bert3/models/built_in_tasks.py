"""keras_bert3's own tasks by their `--task` name (each class's `TaskSpec.command_name`), as "module:Class", so
that the commands find them without importing them (`keras_bert3.jobs.task_registry` adds the others)."""

BUILT_IN_TASKS = {
    "classifier": "keras_bert3.models.bert_classifier:BertClassifier",
    "fill-mask": "keras_bert3.models.bert_masked_lm:BertMaskedLM",
    "multi-label-classifier": "keras_bert3.models.bert_multi_label_classifier:BertMultiLabelClassifier",
    "multiple-choice": "keras_bert3.models.bert_multiple_choice:BertMultipleChoice",
    "regressor": "keras_bert3.models.bert_regressor:BertRegressor",
    "token-classifier": "keras_bert3.models.bert_token_classifier:BertTokenClassifier",
    "question-answerer": "keras_bert3.models.bert_question_answerer:BertQuestionAnswerer",
}
