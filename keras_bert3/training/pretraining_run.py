"""A whole pretraining run: data, model, recipe, checkpoints, logs and plot,
resumable with the same command after the process is killed."""

import contextlib
import csv
import dataclasses
import errno
import json
import math
import os

import keras

from keras_bert3.distribution.devices import check_precision
from keras_bert3.distribution.strategy import distribution_scope
from keras_bert3.files.whole_folders import written_whole
from keras_bert3.files.write_failed import WriteFailed
from keras_bert3.presets.preset_format import BACKBONE_CONFIG_FILE
from keras_bert3.training.deferred_signals import DeferredSignals
from keras_bert3.data.setting_fields import flat_values
from keras_bert3.training.pretraining_config import RESUME_FIELDS
from keras_bert3.training.pretraining_config import PretrainingConfig
from keras_bert3.training.divergence import TrainingDiverged
from keras_bert3.training.resumable_backup import ResumableBackup
from keras_bert3.training.resumable_backup import checkpoint_step
from keras_bert3.training.resumable_backup import latest_checkpoint
from keras_bert3.training.resumable_backup import optimizer_step
from keras_bert3.training.resumable_backup import resume_position
from keras_bert3.training.run_lock import run_lock
from keras_bert3.training.stop_on_nan import StopOnNaN
from keras_bert3.training.training_curves_plot import plot_training_curves

RUN_CONFIG_FILE = "run.json"
BACKUP_DIR = "backup"
HISTORY_FILE = "history.csv"
PLOT_FILE = "training_curves.png"
PRESET_DIR = "preset"
VOCABULARY_FILE = "vocabulary.txt"


def _check_resume(config: PretrainingConfig) -> None:
    """Writes run.json, or refuses to resume a run started with other settings."""
    path = os.path.join(config.output, RUN_CONFIG_FILE)
    current = flat_values(config)
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            previous = recorded_settings(json.load(f))
        changed = {k: (previous.get(k), current[k]) for k in RESUME_FIELDS if previous.get(k) != current[k]}
        if changed and os.path.isdir(os.path.join(config.output, BACKUP_DIR)):
            details = ", ".join(f"{k}: {a!r} -> {b!r}" for k, (a, b) in changed.items())
            raise ValueError(
                f"{config.output} holds a run started with other settings ({details}); "
                "its checkpoint cannot continue with these. Use the same flags to "
                "resume, or a new --output directory."
            )
    os.makedirs(config.output, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(dataclasses.asdict(config), f, indent=2)


def recorded_settings(run_json: dict) -> dict:
    """The settings of a run.json by field name: the data configs' nested
    (this release) or flat (2026-11-28's, with `nsp`)."""
    settings = {key: value for key, value in run_json.items() if not isinstance(value, dict)}
    for part in ("pairing", "masking", "batching"):
        settings.update(run_json.get(part, {}))
    if "nsp" in settings:
        settings["next_sentence_prediction"] = settings.pop("nsp")
    return settings


def _tokenizer(config: PretrainingConfig, corpus_files):
    from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
    from keras_bert3.tokenizers.wordpiece_vocabulary import learn_wordpiece_vocabulary

    if config.preset is not None:
        return BertTokenizer.from_preset(config.preset)
    if _is_prepared(corpus_files):
        return BertTokenizer.from_preset(corpus_files)  # The tokenizer the shards were written with.
    path = os.path.join(config.output, VOCABULARY_FILE)
    if not os.path.isfile(path):
        from keras_bert3.data.corpus_reader import document_dataset

        sentences = document_dataset(corpus_files, seed=config.seed).unbatch()
        learn_wordpiece_vocabulary(sentences, config.vocabulary_size, vocabulary_output_file=path)
    return BertTokenizer(path)


def _is_prepared(corpus) -> bool:
    """A directory written by `keras-bert3 prepare-data` (pre-paired shards)."""
    from keras_bert3.data.paired_shards import INFO_FILE

    return isinstance(corpus, str) and os.path.isfile(os.path.join(corpus, INFO_FILE))


def trim_history(path: str, epochs: int) -> None:
    """Keeps `history.csv`'s rows of the first `epochs` epochs, those of the
    checkpoint a run resumes from, so that an epoch logged after it is logged once."""
    if not os.path.isfile(path):
        return
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows or "epoch" not in rows[0]:
        return
    column = rows[0].index("epoch")
    kept = [rows[0]] + [
        row
        for row in rows[1:]  # A row cut short by a kill is dropped too.
        if len(row) == len(rows[0]) and row[column].isdigit() and int(row[column]) < epochs
    ]
    if len(kept) == len(rows):
        return
    partial = f"{path}.{os.getpid()}.partial"
    with open(partial, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(kept)
    os.replace(partial, path)


class ReportSkippedData(keras.callbacks.Callback):
    """Logs a line at an epoch's end where the data pipeline skipped a new kind of thing."""

    def __init__(self, counters):
        super().__init__()
        self.counters = counters

    def on_epoch_end(self, epoch, logs=None):
        self.counters.log_skips()


class LogStep(keras.callbacks.Callback):
    """Adds the optimizer step and learning rate to each epoch's logs (for the CSV and the plot)."""

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            optimizer = self.model.optimizer
            logs["step"] = int(keras.ops.convert_to_numpy(optimizer.iterations))
            logs["learning_rate"] = float(keras.ops.convert_to_numpy(optimizer.learning_rate))


class _StopAtStep(keras.callbacks.Callback):
    """Ends `fit` after `steps` optimizer steps (the last epoch may be shorter)."""

    def __init__(self, steps: int):
        super().__init__()
        self.steps = steps

    def on_epoch_begin(self, epoch, logs=None):
        self._left = self.steps - optimizer_step(self.model)  # After a resume restored the step.

    def on_train_batch_begin(self, batch, logs=None):
        self._first = batch

    def on_train_batch_end(self, batch, logs=None):
        self._left -= batch - self._first + 1
        if self._left <= 0:
            self.model.stop_training = True


def pretrain(config: PretrainingConfig, *, verbose: int | str = "auto") -> dict:
    """Runs (or resumes) a pretraining run; returns the history of this call. A second run on the same output is refused
    (`<output>/run.lock`); SIGTERM and SIGINT end it after the step under way, with a checkpoint (`TrainingStopped`).

    Example:
    >>> pretrain(PretrainingConfig(output="runs/tiny", steps=300))
    """
    config.validate()
    check_precision(config.precision)
    if config.devices is not None and config.strategy == "none":
        raise ValueError("--devices needs a --strategy that spreads over devices (mirrored, data_parallel, ...).")
    with run_lock(config.output):
        return _locked_run(config, verbose)


def _locked_run(config: PretrainingConfig, verbose) -> dict:
    _check_resume(config)
    if config.precision in ("mixed_bfloat16", "mixed_float16"):
        keras.config.set_dtype_policy(config.precision)
    keras.utils.set_random_seed(config.seed)
    corpus = config.corpus

    # Entered first: MultiWorkerMirroredStrategy must start before any TF op runs.
    with distribution_scope(config.strategy, devices=config.devices) as replicas:
        if config.batching.batch_size % replicas:
            raise ValueError(
                f"--batch-size {config.batching.batch_size} does not split evenly over the "
                f"{replicas} replicas of strategy {config.strategy!r}: use a multiple of {replicas}."
            )
        if not _is_prepared(corpus):
            from keras_bert3.data.corpus_reader import expand_files
            from keras_bert3.training.text_file_check import check_text_files

            check_text_files(expand_files(corpus))  # Before the vocabulary is learnt on it.
        tokenizer = _tokenizer(config, corpus)
        if resume_position(os.path.join(config.output, BACKUP_DIR)) == (0, 0):
            # A resumed run skips it: its checkpoint was trained on this corpus.
            with _damaged_shards_named(corpus):
                _check_makes_a_batch(config, tokenizer, corpus)
        return _train(config, tokenizer, corpus, verbose)


def training_stream(
    config: PretrainingConfig,
    tokenizer,
    corpus: str,
    batch_size: int,
    *,
    start_step: int = 0,
    input_context=None,
    counters=None,
):
    """This worker's training batches from optimizer step `start_step` on: what an uninterrupted run reads from that
    step (same TensorFlow global seed), replayed without training. A `tf.data` service stream is not reproducible: a
    resumed run reads it anew. `counters` (a `DataCounters`) counts what is read and skipped."""
    dataset = one_pass(config, tokenizer, corpus, batch_size, input_context=input_context, counters=counters)
    # A step takes one batch from each of this worker's replicas.
    per_step = (
        1 if input_context is None else max(1, input_context.num_replicas_in_sync // input_context.num_input_pipelines)
    )
    if config.data_service is not None:
        return dataset.repeat()
    return dataset.repeat().skip(start_step * per_step)


def one_pass(config: PretrainingConfig, tokenizer, corpus: str, batch_size: int, *, input_context=None, counters=None):
    """One pass over the corpus: the batches `training_stream` repeats."""
    from keras_bert3.data.paired_shards import read_paired_shards
    from keras_bert3.data.pretraining_dataset import pretraining_dataset

    batching = dataclasses.replace(config.batching, batch_size=batch_size)
    options = dict(seed=config.seed, input_context=input_context, data_service=config.data_service)
    if _is_prepared(corpus):
        return read_paired_shards(corpus, tokenizer, config.masking, batching, pairing=config.pairing, **options)
    return pretraining_dataset(
        corpus, tokenizer, config.pairing, config.masking, batching, counters=counters, **options
    )


def _check_makes_a_batch(config: PretrainingConfig, tokenizer, corpus: str) -> None:
    """Refuses, before the model is built, a corpus whose pass makes no batch."""
    import tensorflow as tf

    if config.data_service is not None:  # Read by the service's workers, not here.
        return
    name = config.corpus
    try:
        batches = sum(1 for _ in one_pass(config, tokenizer, corpus, config.batching.batch_size).take(1))
    except tf.errors.InvalidArgumentError as error:  # The pipeline's own checks (tf.debugging asserts).
        message = assertion_text(error).replace("pass next_sentence_prediction=False", "pass --no-nsp")
        raise ValueError(f"--corpus {name}: {message}") from None
    if batches == 0:
        raise ValueError(
            f"--corpus {name} cannot make one batch of --batch-size {config.batching.batch_size} examples. Add text "
            "(one sentence a line, a blank line between documents; a line longer than --sequence-length "
            "makes one example), or lower --batch-size."
        )


def assertion_text(error) -> str:
    """The message of a `tf.debugging.Assert` in a TensorFlow error (else its first line)."""
    import re

    found = re.search(r"assertion failed: \[(.*?)\]\s*(\[\[|$)", error.message, re.DOTALL)
    return found.group(1).strip() if found else error.message.strip().splitlines()[0]


def _train(config: PretrainingConfig, tokenizer, corpus: str, verbose) -> dict:
    """Builds (or loads) the pretrainer, fits it to `config.steps`, writes the preset and plot."""
    pretrainer = _pretrainer(config, tokenizer)
    backup_dir = os.path.join(config.output, BACKUP_DIR)
    epochs_done, batches_done = resume_position(backup_dir)
    trim_history(os.path.join(config.output, HISTORY_FILE), epochs_done)
    with (
        DeferredSignals() as stop,
        _damaged_shards_named(corpus),
        _full_disk_named(config.output, backup_dir),
        _blown_up_checkpoints_named(config, tokenizer) as nan_stop,
    ):
        history = _fit(
            config,
            pretrainer,
            tokenizer,
            corpus,
            start_step=epochs_done * config.checkpoint_every + batches_done,
            stop=stop,
            nan_stop=nan_stop,
            verbose=verbose,
        )
    trained = int(keras.ops.convert_to_numpy(pretrainer.optimizer.iterations))
    if trained < config.steps:
        raise ValueError(
            f"The data ran out at step {trained:,} of --steps {config.steps:,} (a worker's share of the corpus "
            f"made no batch in a pass); no preset was written. The last checkpoint is kept in {backup_dir}: "
            "add text to the corpus, or spread it over more files, and run the same command to go on."
        )
    with written_whole(os.path.join(config.output, PRESET_DIR), "the preset", marker=BACKBONE_CONFIG_FILE) as folder:
        pretrainer.save_to_preset(folder, tokenizer=tokenizer)
    plot_training_curves(
        os.path.join(config.output, HISTORY_FILE),
        os.path.join(config.output, PLOT_FILE),
        title=f"BERT-{config.model} pretraining, batch {config.batching.batch_size}, length {config.pairing.sequence_length}",
    )
    return history.history


def _pretrainer(config: PretrainingConfig, tokenizer):
    """A new `config.model` for the tokenizer, or `config.preset`'s, compiled with the
    run's recipe; refused where the tokenizer's ids do not fit its embedding."""
    from keras_bert3.models.bert_backbone import BertBackbone
    from keras_bert3.models.bert_backbone import check_vocabulary_sizes
    from keras_bert3.models.bert_pretrainer import BertPretrainer

    if config.preset is not None:
        pretrainer = BertPretrainer.from_preset(
            config.preset, nsp=config.pairing.next_sentence_prediction, packed=config.batching.packed_length is not None
        )
    else:
        backbone = BertBackbone.from_size(
            config.model,
            vocabulary_size=tokenizer.vocabulary_size(),
            max_sequence_length=max(config.pairing.sequence_length, 128),
        )
        pretrainer = BertPretrainer(
            backbone, nsp=config.pairing.next_sentence_prediction, packed=config.batching.packed_length is not None
        )
    check_vocabulary_sizes(pretrainer.backbone, tokenizer)
    pretrainer.compile(
        learning_rate=config.learning_rate,
        total_steps=config.steps,
        warmup_steps=config.warmup_steps,
        precision="float32" if config.precision == "float32" else "auto",
    )
    return pretrainer


def _fit(config: PretrainingConfig, pretrainer, tokenizer, corpus: str, *, start_step: int, stop, nan_stop, verbose):
    """`pretrainer.fit` on the training stream from `start_step`, with the run's
    callbacks (`stop`: the `DeferredSignals` whose signal ends it with a checkpoint)."""
    from keras_bert3.data.data_counters import DataCounters
    from keras_bert3.distribution.worker_input import worker_dataset

    counters = DataCounters() if config.data_service is None and not _is_prepared(corpus) else None

    def make_dataset(input_context, batch_size):
        return training_stream(
            config, tokenizer, corpus, batch_size, start_step=start_step, input_context=input_context, counters=counters
        )

    backup_dir = os.path.join(config.output, BACKUP_DIR)
    callbacks = [
        nan_stop,
        _StopAtStep(config.steps),
        LogStep(),
        keras.callbacks.CSVLogger(os.path.join(config.output, HISTORY_FILE), append=True),
        keras.callbacks.TensorBoard(os.path.join(config.output, "logs")),
        ResumableBackup(backup_dir, stop_on=stop),  # After CSVLogger (`trim_history`).
    ] + ([ReportSkippedData(counters)] if counters is not None else [])
    return pretrainer.fit(
        worker_dataset(make_dataset, config.batching.batch_size),
        epochs=-(-config.steps // config.checkpoint_every),
        steps_per_epoch=config.checkpoint_every,
        callbacks=callbacks,
        verbose=verbose,
    )


@contextlib.contextmanager
def _blown_up_checkpoints_named(config: PretrainingConfig, tokenizer):
    """Yields the run's `StopOnNaN`. Where the run diverges and the last checkpoint's
    weights gave a loss that is not finite or over twice an untrained model's,
    `TrainingDiverged` says to remove it (resumed from, it would diverge again)."""
    backup_dir = os.path.join(config.output, BACKUP_DIR)
    nan_stop = StopOnNaN(backup_dir)
    try:
        yield nan_stop
    except TrainingDiverged as diverged:
        untrained = math.log(tokenizer.vocabulary_size()) + (
            math.log(2) if config.pairing.next_sentence_prediction else 0
        )
        loss = nan_stop.loss_at_last_checkpoint
        last = latest_checkpoint(backup_dir)
        if last is None or loss is None or (math.isfinite(loss) and loss <= 2 * untrained):
            raise
        blown_up = f"its weights give a loss of {loss:.4g}; an untrained model's is about {untrained:.3g}"
        raise TrainingDiverged(diverged.step, diverged.what, last, checkpoint_step(last), blown_up=blown_up) from None


@contextlib.contextmanager
def _damaged_shards_named(corpus):
    """Names the shard of a prepared corpus's unreadable record (`DataLossError` names none)."""
    import tensorflow as tf

    try:
        yield
    except tf.errors.DataLossError as error:
        if not _is_prepared(corpus):
            raise
        from keras_bert3.data.paired_shards import damaged_shard

        found = damaged_shard(corpus)
        if found is None:
            raise
        path, reason = found
        raise ValueError(
            f"{path} is damaged ({reason}). Delete it and run the `keras-bert3 prepare-data` command that wrote "
            f"{corpus} again (it rebuilds the missing shard), then this command again."
        ) from error


@contextlib.contextmanager
def _full_disk_named(output: str, backup_dir: str):
    """Names the run's folder and last checkpoint where its own files found the disk full."""
    try:
        yield
    except WriteFailed:
        raise
    except OSError as error:
        if error.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        last = latest_checkpoint(backup_dir)
        kept = f"The last checkpoint, {last}, is intact: free space and run again to resume from it." if last else ""
        raise WriteFailed("the run's files in", output, error, kept=kept) from error
