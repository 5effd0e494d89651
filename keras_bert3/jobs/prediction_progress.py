"""What a stopped `keras-bert3 predict --input` leaves for its rerun: the rows written so far in `<output>.partial`, and
beside it, in `<output>.partial.json`, how many rows that is, the byte where they end, and what they were predicted
with (the model's and the input's files, by name, size and time of change, and the settings that shape the rows), so
that the same command goes on from the next row and any other is refused."""

import dataclasses
import json
import os

from keras_bert3.files.whole_folders import PARTIAL_SUFFIX

PROGRESS_SUFFIX = PARTIAL_SUFFIX + ".json"
_VERSION = 1


@dataclasses.dataclass
class PredictionProgress:
    """Rows written to the partial file and the byte they end at; `header`: the CSV output's columns (None for
    JSON lines, or before a row)."""

    rows: int = 0
    end: int = 0
    header: list[str] | None = None


def files_fingerprint(path: str) -> list:
    """`[relative name, size, modification time in ns]` of the file `path` or of every file under the folder."""
    if not os.path.isdir(path):
        status = os.stat(path)
        return [[os.path.basename(path), status.st_size, status.st_mtime_ns]]
    listed = []
    for folder, subfolders, names in os.walk(path):
        subfolders.sort()
        for name in sorted(names):
            status = os.stat(os.path.join(folder, name))
            listed.append([os.path.relpath(os.path.join(folder, name), path), status.st_size, status.st_mtime_ns])
    return listed


def prediction_settings(model_path: str, input_path: str, **shaping) -> dict:
    """What a partial file's rows depend on: the model's and input's files, and `shaping` (flags, JSON-able)."""
    return {
        "model": os.path.abspath(model_path),
        "model_files": files_fingerprint(model_path),
        "input": os.path.abspath(input_path),
        "input_files": files_fingerprint(input_path),
        **shaping,
    }


def read_progress(output_path: str, settings: dict) -> PredictionProgress | None:
    """The progress of a stopped run on `output_path` made with `settings`; None where there is none. A partial file
    of other settings, or shorter than its record, is refused (`ValueError`): `--overwrite` starts over."""
    partial, record = output_path + PARTIAL_SUFFIX, output_path + PROGRESS_SUFFIX
    if not (os.path.isfile(partial) and os.path.isfile(record)):
        return None
    from keras_bert3.files.json_files import read_json

    saved = read_json(record)
    if saved.get("version") != _VERSION:
        return None  # Of another version of this command: started over.
    changed = [name for name in settings if saved["settings"].get(name) != settings[name]]
    if changed:
        raise ValueError(
            f"{partial} holds {saved['rows']:,} rows predicted with {_difference(changed[0], saved['settings'], settings)}"
            ": run the command that wrote them to go on, or give --overwrite to start over."
        )
    if os.path.getsize(partial) < saved["end"]:
        raise ValueError(
            f"{partial} is shorter than the {saved['rows']:,} rows its record {record} counts (was it changed?): "
            "give --overwrite to start over."
        )
    return PredictionProgress(saved["rows"], saved["end"], saved["header"])


def record_progress(output_path: str, settings: dict, progress: PredictionProgress) -> None:
    """Writes the record beside the partial file in one rename: a kill leaves the old record or the new one."""
    record = output_path + PROGRESS_SUFFIX
    saved = {"version": _VERSION, "settings": settings} | dataclasses.asdict(progress)
    with open(record + ".tmp", "w", encoding="utf-8") as f:
        json.dump(saved, f)
    os.replace(record + ".tmp", record)


def remove_progress(output_path: str) -> None:
    """Removes the partial file and its record."""
    for path in (output_path + PARTIAL_SUFFIX, output_path + PROGRESS_SUFFIX, output_path + PROGRESS_SUFFIX + ".tmp"):
        if os.path.exists(path):
            os.remove(path)


def _difference(setting: str, before: dict, now: dict) -> str:
    """The setting that differs between a partial file's record and this run, in words."""
    if setting == "model_files":
        return f"--model {now['model']} as it was then: its files changed since"
    if setting == "input_files":
        return f"--input {now['input']} as it was then: the file changed since"
    flag = "--" + setting.replace("_", "-")
    return f"{flag} {_shown(before.get(setting))} (this run: {_shown(now[setting])})"


def _shown(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."
