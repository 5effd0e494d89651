"""Named moments for tests of kills and signals: the process under test stops,
or waits for the test's signal, at the Nth call of a function, so that the
moment is the same in every run (tests/named_moment_site/sitecustomize.py)."""

import json
import os

SITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "named_moment_site")
MOMENT_VARIABLE = "KERAS_BERT3_TEST_MOMENT"
MOMENT_REACHED = "KERAS_BERT3_TEST_MOMENT_REACHED"

# The moments of a pretraining run, as (function, when): "module:attribute" and before or after its call.
BATCH_END = ("keras_bert3.training.stop_on_nan:StopOnNaN.on_train_batch_end", "after")  # Between two steps.
CHECKPOINT_START = ("keras_bert3.training.resumable_backup:write_checkpoint", "before")  # Its history row written.
WEIGHTS_ARRAY = ("h5py:Group.create_dataset", "after")  # Inside a checkpoint's weights file.
CHECKPOINT_RENAME = ("keras_bert3.training.resumable_backup:commit_checkpoint", "before")  # Complete, not renamed.
OLDER_REMOVAL = ("keras_bert3.training.resumable_backup:remove_older_checkpoints", "before")  # Renamed.
# And of `prepare-data`: a shard renamed from its `.partial` name (TensorFlow's `tf.io.gfile.rename`).
SHARD_RENAME = ("tensorflow.python.lib.io.file_io:rename_v2", "after")
# And of the commands that write a folder whole (`export`, `convert`, `export-hf`): written and flushed, not yet in place.
FOLDER_RENAME = ("keras_bert3.files.whole_folders:_replace", "before")


def moment_environment(moment: tuple[str, str], call: int, then: str, environment=None) -> dict:
    """`environment` (default: this process's) with the moment set: at the
    `call`th call of `moment`'s function, `then` ("kill", "sigterm" or "wait")."""
    at, when = moment
    environment = dict(os.environ if environment is None else environment)
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [SITE, environment.get("PYTHONPATH")]))
    environment[MOMENT_VARIABLE] = json.dumps({"at": at, "call": call, "when": when, "then": then})
    return environment


def wait_for_the_moment(process) -> None:
    """Reads the process's stdout (a text pipe) until it says it waits at its
    moment; fails where it ends first."""
    for line in process.stdout:
        if line.strip() == MOMENT_REACHED:
            return
    raise AssertionError(f"the process ended (exit {process.wait()}) before its moment")
