"""The token classifier's part of the commands: a tag a word, entity scores as seqeval counts them."""

import numpy as np

from keras_bert3.jobs.text_rows_job import need_columns
from keras_bert3.jobs.task_job import TaskJob
from keras_bert3.preprocessing.tagged_files import TaggedSentences


class TokenClassifierJob(TaskJob):
    name = "token-classifier"
    best_figure = "f1"
    has_classes = True

    def read(self, path: str, columns) -> TaggedSentences:
        from keras_bert3.preprocessing.tagged_files import read_tagged_file

        return read_tagged_file(path, columns.tag_column)

    def label_names(self, examples: TaggedSentences) -> list[str]:
        return sorted({tag for tags in examples.tags for tag in tags})

    def unknown_labels(self, examples: TaggedSentences, label_names: list[str]) -> list[str]:
        return sorted({tag for tags in examples.tags for tag in tags} - set(label_names))

    def new_task(self, preset: str, examples: TaggedSentences, label_names: list[str], config, **kwargs):
        return self.task_cls.from_preset(
            preset, num_labels=len(label_names), sequence_length=config.sequence_length, **kwargs
        )

    def fit_data(self, examples: TaggedSentences, label_names: list[str]):
        """The words of each sentence (those within `text_limit.MAX_TEXT_CHARACTERS`) and their tags' indices."""
        from keras_bert3.preprocessing.text_limit import words_within

        index = {name: i for i, name in enumerate(label_names)}
        kept = [words_within(words) for words in examples.words]
        words = [sentence[:count] for sentence, count in zip(examples.words, kept)]
        return words, [
            np.array([index[tag] for tag in tags[:count]], "int32") for tags, count in zip(examples.tags, kept)
        ]

    def served_inputs(self, examples: TaggedSentences) -> dict:
        return {"text": [" ".join(words) for words in examples.words]}  # Served models split at whitespace.

    def input_columns(self, columns) -> dict:
        need_columns(columns, "text_column", task=self.name)
        return {"text": columns.text_column}

    def preset_input_names(self, task) -> list[str]:
        return ["text"]

    def preset_outputs(self, task, inputs: dict) -> dict:
        """As the SavedModel's `words`, `num_words` and `word_labels` (-1 past the sequence length)."""
        from keras_bert3.preprocessing.token_classification_dataset import word_batch

        logits = task.predict(inputs["text"], verbose=0)
        words = word_batch(inputs["text"])
        labels = [np.where(np.isnan(l).any(-1), -1, np.nan_to_num(l).argmax(-1)) for l in logits]
        width = max([len(l) for l in labels] + [0])
        return {
            "words": words.to_tensor(b"").numpy(),
            "num_words": words.row_lengths().numpy(),
            "word_labels": np.array([np.pad(l, (0, width - len(l)), constant_values=-1) for l in labels]).reshape(
                -1, width
            ),
        }

    def rows(self, outputs: dict, label_names: list[str] | None) -> list[dict]:
        """`words`, their `tags` ("" for a word past the sequence length) and how many such words `cut`."""
        rows = []
        for words, count, labels in zip(outputs["words"], outputs["num_words"], outputs["word_labels"]):
            labels = [int(label) for label in labels[:count]]
            names = label_names or [str(i) for i in range(max(labels + [0]) + 1)]
            rows.append(
                {
                    "words": [w.decode("utf-8") if isinstance(w, bytes) else str(w) for w in words[:count]],
                    "tags": [names[label] if label >= 0 else "" for label in labels],
                    "cut": sum(label < 0 for label in labels),
                }
            )
        return rows

    def report(self, examples: TaggedSentences, rows: list[dict], label_names: list[str] | None) -> dict:
        """Entity scores over all sentences, a cut word counted as tagged "O"."""
        from keras_bert3.metrics.entity_scores import entity_scores

        # A word the model did not tag (past the sequence, or past a text's first 1,000,000 characters) is "O".
        predicted = [
            [tag or "O" for tag in row["tags"]] + ["O"] * (len(truth) - len(row["tags"]))
            for row, truth in zip(rows, examples.tags)
        ]
        scores = entity_scores(examples.tags, predicted)
        pairs = [(t, p) for truth, tags in zip(examples.tags, predicted) for t, p in zip(truth, tags)]
        overall = scores["overall"]
        return {
            "f1": overall["f1"],
            "precision": overall["precision"],
            "recall": overall["recall"],
            "token_accuracy": sum(t == p for t, p in pairs) / max(len(pairs), 1),
            "sentences": len(rows),
            "sentences_cut": sum(row["cut"] > 0 or len(row["tags"]) < len(t) for row, t in zip(rows, examples.tags)),
            "words_cut": sum(row["cut"] + len(t) - len(row["tags"]) for row, t in zip(rows, examples.tags)),
            "per_type": scores["per_type"],
        }

    def report_lines(self, report: dict) -> list[str]:
        lines = [
            f"entity F1 {report['f1']:.4f}   precision {report['precision']:.4f}   recall {report['recall']:.4f}   "
            f"token accuracy {report['token_accuracy']:.4f}   ({report['sentences']} sentences)"
        ]
        if report["sentences_cut"]:
            lines.append(
                f"{report['sentences_cut']} sentences were longer than the sequence length: their last "
                f"{report['words_cut']} words were not tagged (counted as O)."
            )
        width = max([len(kind) for kind in report["per_type"]] + [4]) + 2
        lines += ["", f"{'type':<{width}}precision  recall      f1  support"]
        for kind, s in report["per_type"].items():
            lines.append(f"{kind:<{width}}{s['precision']:9.4f} {s['recall']:7.4f} {s['f1']:7.4f} {s['support']:8d}")
        return lines
