"""JSON files of presets, checkpoints and exports, read so that a damaged one is named."""

import json


def read_json(path: str):
    """The JSON value in `path`; a file that is not JSON (truncated, damaged, another format) raises a
    ValueError naming it and what to do, instead of the decoder's bare "line 3 column 5"."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(
            f"{path} is not valid JSON ({error}): it is truncated or damaged. Copy or download it again."
        ) from None
