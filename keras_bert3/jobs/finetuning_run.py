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
PRESET_HISTORY_FILE = "finetuning_history.csv"  # The run's history, beside the preset it wrote.
BACKUP_DIR = "backup"
LOGS_DIR = "logs"  # TensorBoard's, in the run's folder, then the preset's.
CURVES_FILE = "training_curves.png"
NOT_RESUME_FIELDS = ("verbose", "metric_for_best", "keep_checkpoints")  # Settings a resumed run may change.

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
    _check_task_flags(job, config)
    work = os.path.normpath(config.output) + CHECKPOINTS_SUFFIX
    locked = False
    try:
        with run_lock(work):
            locked = True
            check_same_settings(work, config, started=os.path.isdir(os.path.join(work, BACKUP_DIR)))
            history = _train(job, config, train, validation, label_names, work)
    except Exception:
        if locked and not _resumable(work):  # Refused or failed before a checkpoint: nothing to go on from.
            shutil.rmtree(work, ignore_errors=True)
        raise
    if config.keep_checkpoints:
        logger.info(f"Checkpoints kept (--keep-checkpoints {config.keep_checkpoints}): {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return history


# Flags of the question answerer alone.
ANSWERER_FLAGS = ("doc_stride", "max_query_length", "max_answer_length", "n_best")


def _check_task_flags(job, config) -> None:
    """Refuses a flag of the question answerer's given to another task."""
    from keras_bert3.data.setting_fields import flag_of
    from keras_bert3.training.finetuning_config import FinetuningConfig

    defaults = FinetuningConfig()
    if job.name != "question-answerer":
        given = [name for name in ANSWERER_FLAGS if getattr(config, name) != getattr(defaults, name)]
        if given:
            flags = ", ".join(flag_of(FinetuningConfig, name) for name in given)
            raise ValueError(f"{flags}: the question answerer's, but --task is {config.task}. Leave them out.")


def _resumable(work: str) -> bool:
    """Whether the run's folder holds a checkpoint to go on from (or one this version cannot read, kept)."""
    from keras_bert3.training.resumable_backup import latest_checkpoint

    try:
        return latest_checkpoint(os.path.join(work, BACKUP_DIR)) is not None
    except ValueError:
        return True


def check_same_settings(
    folder: str,
    config,
    *,
    file: str = SETTINGS_FILE,
    what: str = "a fine-tuning",
    ignored=NOT_RESUME_FIELDS,
    started: bool = True,
) -> None:
    """Writes `config`'s settings to `folder/file`, or refuses to resume `what` started there with others (but the
    `ignored` ones); `started`: whether `folder` holds one to resume (a run refused before its first checkpoint left
    the file alone)."""
    path = os.path.join(folder, file)
    current = dataclasses.asdict(config)
    if started and os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            previous = json.load(f)
        defaults = dataclasses.asdict(type(config)())  # A setting an earlier version did not write: its default.
        changed = {
            k: (previous.get(k, defaults[k]), v)
            for k, v in current.items()
            if k not in ignored and previous.get(k, defaults[k]) != v
        }
        if changed:
            details = ", ".join(f"{k}: {a!r} -> {b!r}" for k, (a, b) in changed.items())
            raise ValueError(
                f"{folder} holds {what} started with other settings ({details}): use the same flags to resume, "
                f"or remove {folder} to start again."
            )
    os.makedirs(folder, exist_ok=True)
    partial = f"{path}.{os.getpid()}.partial"  # Processes that start together (a search's chief and workers).
    with open(partial, "w", encoding="utf-8") as f:
        json.dump(current, f, indent=2)
    os.replace(partial, path)


def _train(job, config, train, validation, label_names, work: str) -> dict:
    from keras_bert3.distribution.strategy import distribution_scope

    with distribution_scope(config.strategy, devices=config.devices) as replicas:
        if config.batch_size % replicas:
            raise ValueError(
                f"--batch-size {config.batch_size} does not split evenly over the {replicas} replicas of "
                f"--strategy {config.strategy}: use a multiple of {replicas}."
            )
        task, plan = _compiled_task(job, config, train, label_names)
        _fit(task, plan, job, config, validation, label_names, work)
    return _write_preset(task, job, config, validation, label_names, work)


@dataclasses.dataclass(frozen=True)
class _Plan:
    """How a fine-tuning walks its batches: the training stream, batches a pass over the file, batches in all, and
    batches a Keras epoch (a pass, or `--eval-steps` optimizer steps: each ends with a score and a checkpoint)."""

    batches: object
    per_pass: int
    total: int
    per_round: int


def _compiled_task(job, config, train, label_names):
    """The new task, compiled with the run's optimizer and loss settings, and its `_Plan`."""
    import keras

    from keras_bert3.models.task_inputs import count_steps
    from keras_bert3.upstream.compiled_state import build_compiled_metrics

    keras.utils.set_random_seed(config.seed)
    precision = {"dtype": config.precision} if config.precision else {}
    task = job.new_task(config.preset, train, label_names, config, **precision)
    x, y = job.fit_data(train, label_names)
    accumulation = config.gradient_accumulation_steps
    # Each optimizer step's examples are a batch of --batch-size times the accumulation steps, cut into that many.
    options = dict(batch_size=config.batch_size * accumulation, shuffle=True)
    # Counted on a pipeline of its own, before the cut: reading a reshuffling pipeline to count it would move its
    # shuffling on by a pass (each iterator made of it does), and runs that count differently would read other passes.
    per_pass = count_steps(task.batches(x, y, **options)) * accumulation
    batches = task.batches(x, y, **options)
    if accumulation > 1:
        batches = batches.rebatch(config.batch_size)
    total = config.max_steps * accumulation if config.max_steps else config.epochs * per_pass
    per_round = config.eval_steps * accumulation if config.eval_steps else per_pass
    if total < accumulation:
        raise ValueError(
            f"{config.train} makes {per_pass} batches of --batch-size {config.batch_size} a pass: fewer than one "
            f"optimizer step of --gradient-accumulation-steps {accumulation}. Use fewer accumulation steps or more "
            "--epochs."
        )
    task.compile(
        learning_rate=config.learning_rate,
        weight_decay=config.weight_decay,
        warmup_ratio=config.warmup_ratio,
        warmup_steps=config.warmup_steps,
        schedule=config.schedule,
        gradient_accumulation_steps=accumulation,
        label_smoothing=config.label_smoothing,
        total_steps=total // accumulation,
    )
    build_compiled_metrics(task, batches.element_spec)  # Their states restored from a mid-epoch checkpoint.
    return task, _Plan(batches, per_pass, total, per_round)


def _fit(task, plan, job, config, validation, label_names, work: str) -> None:
    """Fits `task` along `plan`, resuming from the newest checkpoint in `work`."""
    from keras_bert3.training.deferred_signals import DeferredSignals
    from keras_bert3.training.pretraining_run import trim_history
    from keras_bert3.training.resumable_backup import ResumableBackup
    from keras_bert3.training.resumable_backup import resume_position
    from keras_bert3.training.stop_after_batches import StopAfterBatches

    backup_dir, history_csv = os.path.join(work, BACKUP_DIR), os.path.join(work, HISTORY_FILE)
    epochs_done, batches_done = resume_position(backup_dir)
    trim_history(history_csv, epochs_done)
    done = epochs_done * plan.per_round + batches_done
    callbacks = _logging_callbacks(task, job, config, validation, label_names, work)
    stopping = _early_stopping(job, config, validation, history_csv, work)
    validation_data = None if validation is None else job.fit_data(validation, label_names)
    if validation_data is not None and validation_data[1] is None:
        validation_data = validation_data[:1]
    with DeferredSignals() as stop:
        save_every = config.save_steps * config.gradient_accumulation_steps if config.save_steps else None
        keep = config.keep_checkpoints or 1
        # After the CSV row, before the best weights.
        callbacks.append(ResumableBackup(backup_dir, stop_on=stop, save_every=save_every, keep=keep))
        if stopping is None or not stopping.stops_before(task):
            task.fit(
                _training_stream(plan.batches, done, config.strategy),
                epochs=-(-plan.total // plan.per_round),
                steps_per_epoch=plan.per_round,
                shuffle=False,  # Shuffled in the stream, anew each pass.
                validation_data=validation_data,
                callbacks=callbacks + ([stopping] if stopping else []) + [StopAfterBatches(plan.total, done)],
                verbose=config.verbose,
            )
    if stopping is not None and stopping.best_weights_file():
        from keras_bert3.files.weight_files import load_keras_weights

        load_keras_weights(task, stopping.best_weights_file())


def _training_stream(batches, done: int, strategy: str):
    """The batches from the `done`th on, a pass after another. Each iterator made of a pipeline that shuffles anew
    each pass moves its shuffling on by a pass, and under a `tf.distribute` strategy Keras makes one to build the step
    before the one it trains on: without a strategy, one is made here too, so that both read the same passes."""
    import keras

    stream = batches.repeat().skip(done)
    if strategy == "none" and keras.backend.backend() == "tensorflow":
        iter(stream)
    return stream


def _logging_callbacks(task, job, config, validation, label_names, work: str) -> list:
    """The validation report's figures (where a figure chooses the best weights, or scores come every N steps), the
    step and learning rate, then the history file and TensorBoard's logs."""
    import keras

    from keras_bert3.jobs.validation_scores import ValidationScores
    from keras_bert3.jobs.validation_scores import check_figure
    from keras_bert3.training.pretraining_run import LogStep

    callbacks = [LogStep()]
    if validation is not None and (config.metric_for_best or config.patience is not None or config.eval_steps):
        if config.metric_for_best and config.metric_for_best != job.best_figure:  # The task's own is in its report.
            check_figure(config.metric_for_best, job, task, validation, label_names, config.validation)
        callbacks.insert(0, ValidationScores(job, validation, label_names))
    callbacks.append(keras.callbacks.CSVLogger(os.path.join(work, HISTORY_FILE), append=True))
    callbacks.append(keras.callbacks.TensorBoard(os.path.join(work, LOGS_DIR), write_graph=False))  # The scalars.
    return callbacks


def _early_stopping(job, config, validation, history_csv: str, work: str):
    """Early stopping on the chosen figure, keeping the best weights (None where nothing asks for it)."""
    from keras_bert3.jobs.validation_scores import higher_is_better
    from keras_bert3.training.resumable_early_stopping import ResumableEarlyStopping

    if config.patience is None and config.metric_for_best is None:
        return None
    if validation is None:
        flag = "--patience" if config.patience is not None else "--metric-for-best"
        raise ValueError(f"{flag} watches the validation score: give --validation too.")
    figure = config.metric_for_best or job.best_figure
    monitor = f"val_{figure}" if figure else job.monitor
    mode = ("max" if higher_is_better(figure) else "min") if figure else job.monitor_mode
    patience = config.patience if config.patience is not None else 1_000_000  # Never stops: keeps the best.
    return ResumableEarlyStopping(history_csv, work, monitor=monitor, mode=mode, patience=patience)


def _write_preset(task, job, config, validation, label_names, work: str) -> dict:
    """Chooses the task's settings on the validation file, writes the preset (with its history, curves and logs)."""
    from keras_bert3.files.whole_folders import written_whole
    from keras_bert3.presets.preset_format import write_json
    from keras_bert3.presets.task_preset import TASK_CONFIG_FILE
    from keras_bert3.training.training_curves_plot import plot_training_curves

    chosen = job.tune(task, validation, label_names)
    if chosen:
        logger.info("Chosen on the validation file: " + ", ".join(f"{k} {v:g}" for k, v in chosen.items()))
    history_csv = os.path.join(work, HISTORY_FILE)
    history = logged_history(history_csv)
    with written_whole(config.output, "the fine-tuned preset", marker=TASK_CONFIG_FILE) as folder:
        task.save_to_preset(folder)
        if label_names:
            write_json(os.path.join(folder, LABEL_NAMES_FILE), {"class_names": label_names})
        shutil.copy(history_csv, os.path.join(folder, PRESET_HISTORY_FILE))
        title = f"{config.task} fine-tuning, batch {config.batch_size}, learning rate {config.learning_rate:g}"
        plot_training_curves(history_csv, os.path.join(folder, CURVES_FILE), title=title)
        if os.path.isdir(os.path.join(work, LOGS_DIR)):
            shutil.copytree(os.path.join(work, LOGS_DIR), os.path.join(folder, LOGS_DIR))
    return history


def logged_history(history_csv: str) -> dict:
    """The run's history (every epoch, resumed parts included) by metric."""
    with open(history_csv, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    number = lambda text: float("nan") if text in ("", "NA") else float(text)  # noqa: E731  (CSVLogger's "NA": absent)
    names = [name for name in (rows[0] if rows else {}) if name != "epoch" and any(row[name] != "NA" for row in rows)]
    return {name: [number(row[name]) for row in rows] for name in names}
