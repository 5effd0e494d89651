"""Fill-mask's part of the commands: `predict --task fill-mask` on a pretrained preset (or a fill-mask model's
export), texts with [MASK] in, each [MASK]'s likeliest tokens a row out. It is not fine-tuned: its head is the one
pretraining trains."""

import numpy as np

from keras_bert3.jobs.task_job import TaskJob
from keras_bert3.jobs.text_rows_job import need_columns

MASK = "[MASK]"  # BERT's mask token, as the presets' tokenizers have it.


class FillMaskJob(TaskJob):
    name = "fill-mask"

    def read(self, path: str, columns):
        raise ValueError(
            "--task fill-mask is not fine-tuned or evaluated on labelled files: it fills [MASK]s with the masked-LM "
            "head pretraining trains (keras-bert3 pretrain). Use keras-bert3 predict --task fill-mask --model PRESET."
        )

    def input_columns(self, columns) -> dict:
        need_columns(columns, "text_column", task=self.name)
        return {"text": columns.text_column}

    def input_batch(self, rows, columns: dict, path: str) -> dict:
        """The texts of a `predict --input` file; one without [MASK] is refused naming its line."""
        batch = super().input_batch(rows, columns, path)
        for (line, _), text in zip(rows, batch["text"]):
            if MASK not in text:
                raise ValueError(
                    f"{path}, line {line}: the text {text[:60]!r} has no {MASK}. Write {MASK} where a token should be "
                    "filled in."
                )
        return batch

    def preset_input_names(self, task) -> list[str]:
        return ["text"]

    def preset_outputs(self, task, inputs: dict) -> dict:
        filled = task.predict(inputs["text"])
        masks = max([len(text) for text in filled] + [1])
        shape = (len(filled), masks, task.top_k)
        outputs = {"tokens": np.full(shape, "", object), "scores": np.zeros(shape, "float32")}
        for row, text in enumerate(filled):
            for column, tokens in enumerate(text):
                outputs["tokens"][row, column] = [token["token"] for token in tokens]
                outputs["scores"][row, column] = [token["score"] for token in tokens]
        return outputs | {"mask_count": np.array([len(text) for text in filled], "int32")}

    def rows(self, outputs: dict, label_names) -> list[dict]:
        """Each text's best token for each [MASK] (`tokens`, `scores`) and the `top_tokens` / `top_scores` of each."""
        decoded = lambda token: token.decode("utf-8") if isinstance(token, bytes) else str(token)  # noqa: E731
        rows = []
        for tokens, scores, count in zip(outputs["tokens"], outputs["scores"], outputs["mask_count"]):
            top_tokens = [[decoded(token) for token in mask] for mask in tokens[:count]]
            top_scores = [[float(score) for score in mask] for mask in scores[:count]]
            rows.append(
                {
                    "tokens": [mask[0] for mask in top_tokens],
                    "scores": [mask[0] for mask in top_scores],
                    "top_tokens": top_tokens,
                    "top_scores": top_scores,
                }
            )
        return rows
