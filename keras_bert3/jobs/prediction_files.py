"""`keras-bert3 predict`: every row of a file with its prediction, streamed, written whole or not at all."""

import contextlib
import csv
import functools
import json
import os

from keras_bert3.files.whole_folders import partial_path
from keras_bert3.files.write_failed import write_failures_named
from keras_bert3.jobs.served_model import ServedModel
from keras_bert3.preprocessing.labelled_files import decoded_lines
from keras_bert3.preprocessing.labelled_files import file_rows

OUTPUT_FORMATS = (".csv", ".jsonl")
TABLE_INPUTS = (".csv", ".jsonl", ".json")  # Other inputs are plain text, one text a line.


def predict_file(
    model_path: str,
    input_path: str,
    output_path: str,
    columns,
    *,
    batch_size: int = 64,
    overwrite: bool = False,
    verbose: int = 1,
) -> int:
    """Writes each row of `input_path` (CSV, JSON lines, or plain text a text a line)
    with its prediction (`TaskJob.rows`) to `output_path` (`.csv` or `.jsonl`);
    returns the number of rows. An existing output is refused unless `overwrite`."""
    import keras

    extension = os.path.splitext(output_path)[1].lower()
    if extension not in OUTPUT_FORMATS:
        raise ValueError(f"--output {output_path}: name a {' or '.join(OUTPUT_FORMATS)} file (its format).")
    if os.path.exists(output_path) and not overwrite:
        raise ValueError(f"--output {output_path} exists: give --overwrite to replace it, or another name.")
    if not os.path.isfile(input_path):
        raise FileNotFoundError(f"--input {input_path} is not a file: give the file of texts to predict.")
    model = ServedModel(model_path)
    table = input_path.lower().endswith(TABLE_INPUTS)
    inputs = model.job.input_columns(columns) if table else _plain_text_inputs(model)
    partial = partial_path(output_path)
    progress = keras.utils.Progbar(None, verbose=verbose, unit_name="row")
    written = 0
    writing = functools.partial(write_failures_named, output_path, "the predictions", kept="Nothing was left behind.")
    try:
        with writing():
            out = open(partial, "w", encoding="utf-8", newline="")
        try:
            write = _row_writer(out, extension)
            for chunk in _chunks(_input_rows(input_path, table), batch_size):
                batch = {
                    name: [_cell(row, column, input_path, line) for line, row in chunk]
                    for name, column in inputs.items()
                }
                predictions = model(batch)
                with writing():
                    for (_, row), prediction in zip(chunk, predictions):
                        write(row | prediction)
                written += len(chunk)
                progress.update(written)
            with writing():
                out.flush()
                os.fsync(out.fileno())
        finally:
            with contextlib.suppress(OSError):  # After a failed write, closing fails too.
                out.close()
        with writing():
            os.replace(partial, output_path)
    except BaseException:
        if os.path.exists(partial):
            os.remove(partial)
        raise
    return written


def _plain_text_inputs(model) -> dict:
    if model.input_names != ["text"]:
        raise ValueError(
            f"This model takes {' and '.join(model.input_names)}: give a .csv or .jsonl --input with a column "
            "for each (--text-column, --second-column)."
        )
    return {"text": "text"}


def _input_rows(path: str, table: bool):
    if table:
        yield from file_rows(path)
    else:
        for line, text in decoded_lines(path):
            yield line, {"text": text}


def _chunks(rows, size: int):
    chunk = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _cell(row: dict, column: str, path: str, line: int) -> str:
    value = row.get(column)
    if value is None:
        raise ValueError(f"{path}, line {line}: no column {column!r} (its columns: {sorted(row)}).")
    return str(value)


def _row_writer(out, extension: str):
    """A function that writes one row to `out` as CSV (lists joined by spaces) or a JSON line."""
    if extension == ".jsonl":
        return lambda row: out.write(json.dumps(row, ensure_ascii=False) + "\n")
    writer = None

    def write(row):
        nonlocal writer
        if writer is None:
            writer = csv.DictWriter(out, list(row), extrasaction="ignore")
            writer.writeheader()
        writer.writerow({k: " ".join(map(str, v)) if isinstance(v, list) else v for k, v in row.items()})

    return write
