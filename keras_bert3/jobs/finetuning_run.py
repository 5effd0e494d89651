"""`keras-bert3 finetune`: a task fine-tuned on a labelled file, resumable.

`<output>.checkpoints/` holds the run's lock, settings, history, checkpoint (each
epoch's end, and at SIGTERM or SIGINT) and best weights. The same command resumes with
the batches an uninterrupted run would read next, ending with that run's history and weights.
"""

import csv
import dataclasses
import json
import logging
import os
import shutil

from keras_bert3.jobs.served_model import LABEL_NAMES_FILE
from keras_bert3.jobs.task_registry import job_named

CHECKPOINTS_SUFFIX = ".checkpoints"
SETTINGS_FILE = "finetuning.json"
HISTORY_FILE = "history.csv"
BACKUP_DIR = "backup"
NOT_RESUME_FIELDS = ("verbose",)  # Settings a resumed run may change.

logger = logging.getLogger("keras_bert3.jobs")


def finetune(config) -> dict:
    """Fine-tunes `config.task` and writes its preset; returns the whole run's history."""
    from keras_bert3.distribution.devices import check_precision
    from keras_bert3.files.whole_folders import check_replaceable
    from keras_bert3.presets.task_preset import TASK_CONFIG_FILE
    from keras_bert3.training.run_lock import run_lock

    job = job_named(config.task)
    check_precision(config.precision)
    check_replaceable(config.output, "the fine-tuned preset", marker=TASK_CONFIG_FILE)
    train = job.read(config.train, config)
    job.check_trainable(train, config.train)
    label_names = job.label_names(train)
    count = len(next(iter(job.served_inputs(train).values())))
    shown = "" if not label_names else f", {len(label_names)} labels: {', '.join(label_names[:20])}"
    logger.info(f"{config.train}: {count:,} training examples{shown}{', ...' if len(label_names or ()) > 20 else ''}")
    validation = None
    if config.validation:
        validation = job.read(config.validation, config)
        unknown = job.unknown_labels(validation, label_names) if label_names else []
        if unknown:
            raise ValueError(
                f"{config.validation} has labels the training file lacks: {', '.join(map(repr, unknown[:5]))}. "
                "The model learns only the training file's labels: add examples of them there, or remove these."
            )
    if config.patience is not None and validation is None:
        raise ValueError("--patience watches the validation score: give --validation too.")
    work = os.path.normpath(config.output) + CHECKPOINTS_SUFFIX
    locked = False
    try:
        with run_lock(work):
            locked = True
            _check_same_settings(work, config)
            history = _train(job, config, train, validation, label_names, work)
    except Exception:
        if locked and not _resumable(work):  # Refused or failed before a checkpoint: nothing to go on from.
            shutil.rmtree(work, ignore_errors=True)
        raise
    shutil.rmtree(work, ignore_errors=True)
    return history


def _resumable(work: str) -> bool:
    """Whether the run's folder holds a checkpoint to go on from (or one this version cannot read, kept)."""
    from keras_bert3.training.resumable_backup import latest_checkpoint

    try:
        return latest_checkpoint(os.path.join(work, BACKUP_DIR)) is not None
    except ValueError:
        return True


def _check_same_settings(work: str, config) -> None:
    """Writes the run's settings, or refuses to resume a run started with others."""
    path = os.path.join(work, SETTINGS_FILE)
    current = dataclasses.asdict(config)
    if os.path.isfile(path) and os.path.isdir(os.path.join(work, BACKUP_DIR)):
        with open(path, encoding="utf-8") as f:
            previous = json.load(f)
        changed = {
            k: (previous.get(k), v) for k, v in current.items() if k not in NOT_RESUME_FIELDS and previous.get(k) != v
        }
        if changed:
            details = ", ".join(f"{k}: {a!r} -> {b!r}" for k, (a, b) in changed.items())
            raise ValueError(
                f"{work} holds a fine-tuning started with other settings ({details}): use the same flags to resume, "
                f"or remove {work} to start again."
            )
    with open(path, "w", encoding="utf-8") as f:
        json.dump(current, f, indent=2)


def _train(job, config, train, validation, label_names, work: str) -> dict:
    import keras

    from keras_bert3.files.weight_files import load_keras_weights
    from keras_bert3.files.whole_folders import written_whole
    from keras_bert3.models.task_inputs import count_steps
    from keras_bert3.presets.preset_format import write_json
    from keras_bert3.presets.task_preset import TASK_CONFIG_FILE
    from keras_bert3.training.deferred_signals import DeferredSignals
    from keras_bert3.training.pretraining_run import trim_history
    from keras_bert3.training.resumable_backup import ResumableBackup
    from keras_bert3.training.resumable_backup import resume_position
    from keras_bert3.training.resumable_early_stopping import ResumableEarlyStopping
    from keras_bert3.upstream.compiled_state import build_compiled_metrics

    keras.utils.set_random_seed(config.seed)
    precision = {"dtype": config.precision} if config.precision else {}
    task = job.new_task(config.preset, train, label_names, config, **precision)
    task.compile(learning_rate=config.learning_rate)
    x, y = job.fit_data(train, label_names)
    batches = task.batches(x, y, batch_size=config.batch_size, shuffle=True)
    steps = count_steps(batches)
    build_compiled_metrics(task, batches.element_spec)  # Their states restored from a mid-epoch checkpoint.
    backup_dir, history_csv = os.path.join(work, BACKUP_DIR), os.path.join(work, HISTORY_FILE)
    epochs_done, batches_done = resume_position(backup_dir)
    trim_history(history_csv, epochs_done)
    callbacks = [keras.callbacks.CSVLogger(history_csv, append=True)]
    stopping = None
    if config.patience is not None:
        options = dict(monitor=job.monitor, mode=job.monitor_mode, patience=config.patience)
        stopping = ResumableEarlyStopping(history_csv, work, **options)
    validation_data = None if validation is None else job.fit_data(validation, label_names)
    if validation_data is not None and validation_data[1] is None:
        validation_data = validation_data[:1]
    with DeferredSignals() as stop:
        callbacks.append(ResumableBackup(backup_dir, stop_on=stop))  # After the CSV row, before the best weights.
        if stopping is None or not stopping.stops_before(task):
            task.fit(
                batches.repeat().skip(epochs_done * steps + batches_done),
                epochs=config.epochs,
                steps_per_epoch=steps,
                shuffle=False,  # Shuffled in the stream, anew each epoch.
                validation_data=validation_data,
                callbacks=callbacks + ([stopping] if stopping else []),
                verbose=config.verbose,
            )
    if stopping is not None and stopping.best_weights_file():
        load_keras_weights(task, stopping.best_weights_file())
    chosen = job.tune(task, validation, label_names)
    if chosen:
        logger.info("Chosen on the validation file: " + ", ".join(f"{k} {v:g}" for k, v in chosen.items()))
    history = _logged_history(history_csv)
    with written_whole(config.output, "the fine-tuned preset", marker=TASK_CONFIG_FILE) as folder:
        task.save_to_preset(folder)
        if label_names:
            write_json(os.path.join(folder, LABEL_NAMES_FILE), {"class_names": label_names})
        shutil.copy(history_csv, os.path.join(folder, "finetuning_history.csv"))
    return history


def _logged_history(history_csv: str) -> dict:
    """The run's history (every epoch, resumed parts included) by metric."""
    with open(history_csv, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    number = lambda text: float("nan") if text in ("", "NA") else float(text)  # noqa: E731  (CSVLogger's "NA": absent)
    names = [name for name in (rows[0] if rows else {}) if name != "epoch" and any(row[name] != "NA" for row in rows)]
    return {name: [number(row[name]) for row in rows] for name in names}
