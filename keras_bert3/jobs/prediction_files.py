"""`keras-bert3 predict`: every row of a file with its prediction, streamed to a partial file that a stopped run's
rerun goes on from (`prediction_progress`), renamed into place when whole."""

import contextlib
import csv
import io
import itertools
import json
import logging
import os

from keras_bert3.files.write_failed import write_failures_named
from keras_bert3.jobs.prediction_progress import (
    PARTIAL_SUFFIX,
    PredictionProgress,
    prediction_settings,
    read_progress,
    record_progress,
    remove_progress,
)
from keras_bert3.jobs.served_model import ServedModel
from keras_bert3.preprocessing.labelled_files import decoded_lines, file_rows

OUTPUT_FORMATS = (".csv", ".jsonl")
TABLE_INPUTS = (".csv", ".jsonl", ".json")  # Other inputs are plain text, one text a line.

logger = logging.getLogger("keras_bert3.jobs")


def predict_file(
    model_path: str,
    input_path: str,
    output_path: str,
    columns,
    *,
    batch_size: int = 64,
    overwrite: bool = False,
    prediction_prefix: str = "",
    verbose: int = 1,
    task: str | None = None,
) -> int:
    """Writes each row of `input_path` (CSV, JSON lines, or plain text a text a line) with its prediction
    (`TaskJob.rows`, each field's name after `prediction_prefix`) to `output_path` (`.csv` or `.jsonl`); returns the
    number of rows. An existing output, and an input column named as a prediction field, are refused; a run stopped
    midway (a signal, a kill) keeps its finished rows, and the same call goes on from the next row (`overwrite`:
    start over). The output equals an uninterrupted run's, byte for byte. `task`: as `ServedModel`'s."""
    import keras

    extension = _checked_paths(input_path, output_path, overwrite)
    model = ServedModel(model_path, task=task)
    table = input_path.lower().endswith(TABLE_INPUTS)
    inputs = model.job.input_columns(columns) if table else _plain_text_inputs(model)
    shaping = dict(columns=inputs, batch_size=batch_size, prediction_prefix=prediction_prefix, output_format=extension)
    settings = prediction_settings(model_path, input_path, **shaping)
    partial = output_path + PARTIAL_SUFFIX
    out, progress = _opened_partial(output_path, settings, overwrite)
    try:
        if progress.rows:
            logger.info(f"Going on from row {progress.rows + 1:,}: {progress.rows:,} rows are kept in {partial}.")
        encode = _row_encoder(extension, progress)
        bar = keras.utils.Progbar(None, verbose=verbose, unit_name="row")
        bar.update(progress.rows)
        rows = itertools.islice(_input_rows(input_path, table), progress.rows, None)
        for chunk in _chunks(rows, batch_size):
            batch = model.job.input_batch(chunk, inputs, input_path)
            written = [
                _output_row(row, prediction, prediction_prefix, input_path, line)
                for (line, row), prediction in zip(chunk, model(batch))
            ]
            with _writing(output_path):
                out.writelines(encode(written))
                out.flush()
                progress.rows, progress.end = progress.rows + len(chunk), out.tell()
                record_progress(output_path, settings, progress)
            bar.update(progress.rows)
        with _writing(output_path):
            os.fsync(out.fileno())
            os.replace(partial, output_path)
        remove_progress(output_path)
    except Exception:
        _close(out)
        remove_progress(output_path)  # Nothing half-written: a bad row or a failed write ends the run.
        raise
    except BaseException:  # A signal (SIGTERM, Ctrl-C): the finished rows stay for the rerun.
        _close(out)
        if progress.rows:
            logger.info(f"{progress.rows:,} rows are kept in {partial}: the same command goes on from the next.")
        else:
            remove_progress(output_path)
        raise
    finally:
        _close(out)
    return progress.rows


def _checked_paths(input_path: str, output_path: str, overwrite: bool) -> str:
    """The output's extension; refuses an output of another format, an existing one (unless `overwrite`) and a
    missing input."""
    extension = os.path.splitext(output_path)[1].lower()
    if extension not in OUTPUT_FORMATS:
        raise ValueError(f"--output {output_path}: name a {' or '.join(OUTPUT_FORMATS)} file (its format).")
    if os.path.exists(output_path) and not overwrite:
        raise ValueError(f"--output {output_path} exists: give --overwrite to replace it, or another name.")
    if not os.path.isfile(input_path):
        raise FileNotFoundError(f"--input {input_path} is not a file: give the file of texts to predict.")
    return extension


def _writing(output_path: str):
    return write_failures_named(output_path, "the predictions", kept="Nothing was left behind.")


def _opened_partial(output_path: str, settings: dict, overwrite: bool):
    """The partial file, open, locked and cut to the rows a stopped run of the same settings recorded, and its
    progress (none: from the start). Refused (another run writes it, other settings), a stopped run's rows stay."""
    partial = output_path + PARTIAL_SUFFIX
    existed = os.path.exists(partial)
    with _writing(output_path):
        out = os.fdopen(os.open(partial, os.O_RDWR | os.O_CREAT, 0o644), "r+b")
    try:
        _lock(out, partial, output_path)
        progress = (None if overwrite else read_progress(output_path, settings)) or PredictionProgress()
        with _writing(output_path):
            out.truncate(progress.end)
            out.seek(progress.end)
    except BaseException:
        _close(out)
        if not existed:
            os.remove(partial)
        raise
    return out, progress


def _close(out) -> None:
    with contextlib.suppress(OSError):  # After a failed write, closing fails too.
        out.close()


def _lock(out, partial: str, output_path: str) -> None:
    """Holds the partial file for this run, or refuses where another run writes it."""
    try:
        import fcntl
    except ImportError:  # Not POSIX: unlocked.
        return
    try:
        fcntl.flock(out.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise ValueError(
            f"Another predict is writing --output {output_path} (it holds {partial}): let it end, or give another "
            "--output."
        ) from None
    except OSError:  # No flock on this file system: unlocked.
        return


def _output_row(row: dict, prediction: dict, prefix: str, path: str, line: int) -> dict:
    """The input row and its prediction's fields; an input column of a prediction field's name is refused."""
    named = {prefix + name: value for name, value in prediction.items()}
    clash = [name for name in named if name in row]
    if clash:
        raise ValueError(
            f"{path}, line {line}: the column {clash[0]!r} has the name of a prediction field "
            f"({', '.join(named)}), which predict would write over it. Give --prediction-prefix (e.g. "
            "predicted_) to name the predictions' fields apart, or rename the column."
        )
    return row | named


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


def _row_encoder(extension: str, progress: PredictionProgress):
    """A function of a list of rows to their UTF-8 bytes, a piece a row (a long row is not copied again into one
    string of all), as CSV (lists joined by spaces; the header before the first row, its columns kept in
    `progress.header`) or JSON lines."""
    if extension == ".jsonl":
        return lambda rows: [piece for row in rows for piece in (json.dumps(row, ensure_ascii=False).encode(), b"\n")]

    def encode(rows):
        pieces = []
        if progress.header is None:
            progress.header = list(rows[0])
            pieces.append(_csv_line(dict(zip(progress.header, progress.header)), progress.header))
        for row in rows:
            pieces.append(
                _csv_line(
                    {k: " ".join(map(str, v)) if isinstance(v, list) else v for k, v in row.items()}, progress.header
                )
            )
        return pieces

    return encode


def _csv_line(row: dict, header: list[str]) -> bytes:
    text = io.StringIO(newline="")
    csv.DictWriter(text, header, extrasaction="ignore").writerow(row)
    return text.getvalue().encode("utf-8")
