"""Pre-paired shards: NSP pairs made once, in N processes, into TFRecord shards without masks; training reads
them with fresh masks every pass (dynamic masking on pre-paired data, as NVIDIA's LDDL does). One shard per byte
range of equal size, so the count is fixed by the corpus, not the workers; each is written to a `.partial` file
then renamed, so a killed run leaves only whole shards and the same command finishes the rest.
"""

import dataclasses
import hashlib
import json
import logging
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time

import tensorflow as tf

from keras_bert3.data.batching_config import BatchingConfig
from keras_bert3.data.corpus_reader import corpus_ranges
from keras_bert3.data.corpus_reader import expand_files
from keras_bert3.data.masking_config import MaskingConfig
from keras_bert3.data.pairing_config import PairingConfig
from keras_bert3.data.pairing_config import raise_problems
from keras_bert3.data.setting_fields import from_dict
from keras_bert3.data.shard_worker import write_shards
from keras_bert3.data.training_batches import training_batches
from keras_bert3.data.old_keywords import takes_old_keywords
from keras_bert3.distribution.worker_input import files_for_worker
from keras_bert3.files.write_failed import WriteFailed

LOGGER = logging.getLogger(__name__)

INFO_FILE = "prepared.json"
INFO_FORMAT = "keras_bert3 paired shards 2"
SHARD_NAME = "paired-{index:05d}-of-{count:05d}.tfrecord"


def tokenizer_fingerprint(tokenizer) -> str:
    """A short hash of what decides the token ids: vocabulary, casing, accents, special tokens."""
    config = {key: value for key, value in tokenizer.get_config().items() if key not in ("name", "trainable", "dtype")}
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:16]


def default_num_shards(total_bytes: int) -> int:
    """A multiple of 64 (1, 2, 4, ... 64 readers get equal shares), at most 256 MB of text a shard."""
    return 64 * max(1, -(-total_bytes // (64 * 256 * 2**20)))


def default_workers() -> int:
    """One process per 8 cores: each process's `tf.data` already pairs on all cores."""
    return max(1, len(os.sched_getaffinity(0)) // 8)


@takes_old_keywords
def prepare_pretraining_data(
    files,
    tokenizer,
    output_dir: str,
    pairing: PairingConfig = PairingConfig(),
    *,
    seed: int = 0,
    num_shards: int | None = None,
    workers: int | None = None,
    verbose: bool = True,
) -> list[str]:
    """Pairs a corpus into `num_shards` TFRecord shards, `workers` processes at once; returns their paths.

    Each shard holds the pairs of one byte range as the first pass of `pretraining_dataset` makes them, the same in
    any process. Records: `input_ids`, `segment_ids` (unpadded), `next_sentence_labels`. `prepared.json` holds the
    settings and the tokenizer's fingerprint, which `read_paired_shards` checks. Rerun after a kill, the same
    command keeps the finished shards; other settings in a directory of shards are refused.

    Args:
        files: a path, glob or list of them (see `document_dataset`).
        tokenizer: a `BertTokenizer`.
        output_dir: str. Created if needed.
        pairing, seed: as `pretraining_dataset`.
        num_shards: int. Default: `default_num_shards`.
        workers: int. Processes, this one included (default: `default_workers()`); the others run
            `python -m keras_bert3.data.shard_worker`.
        verbose: bool. Log a line per shard and a summary (INFO, the `keras_bert3` logger).

    Example:
    >>> prepare_pretraining_data("corpus/*.txt", tokenizer, "prepared", workers=8)  # doctest: +SKIP
    """
    workers = workers or default_workers()
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}.")
    tasks, num_shards, info = plan_shards(files, tokenizer, output_dir, pairing, seed=seed, num_shards=num_shards)
    if verbose and len(tasks) < num_shards:
        LOGGER.info(
            f"prepare_pretraining_data: {num_shards - len(tasks)} of {num_shards} shards already written; building {len(tasks)}."
        )
    start, examples = time.perf_counter(), 0
    try:
        for done, result in enumerate(_in_worker_processes(tokenizer, info, tasks, workers), 1):
            examples += result["examples"]
            if verbose:
                LOGGER.info(
                    f"prepare_pretraining_data: shard {result['index']} ({result['examples']:,} examples, "
                    f"{result['seconds']:.1f} s); {done}/{len(tasks)} built."
                )
    except WriteFailed:  # The workers are stopped: their half-written shards go too.
        _remove_partials(output_dir)
        raise
    elapsed = time.perf_counter() - start
    if verbose and tasks:
        LOGGER.info(
            f"prepare_pretraining_data: {examples:,} examples in {len(tasks)} shards, {elapsed:.1f} s, "
            f"{examples / max(elapsed, 1e-9):,.0f} examples/s with {workers} workers."
        )
    return shard_paths(output_dir, num_shards)


def plan_shards(
    files, tokenizer, output_dir: str, pairing: PairingConfig, *, seed: int, num_shards: int | None
) -> tuple[list[dict], int, dict]:
    """Sets up `output_dir` (writes or checks `prepared.json`, saves the tokenizer, deletes half-written
    shards). Returns `(tasks, num_shards, info)`: a task `{"range", "path", "index"}` per missing shard (see
    `write_shards`), the shard count, and `prepared_info`."""
    pairing.validate()
    paths = expand_files(files)
    total = sum(tf.io.gfile.stat(path).length for path in paths)
    num_shards = num_shards or default_num_shards(total)
    if num_shards < 1:
        raise ValueError(f"num_shards must be at least 1, got {num_shards}.")
    info = prepared_info(tokenizer, pairing, seed, num_shards, paths)
    tf.io.gfile.makedirs(output_dir)
    _write_or_check_info(output_dir, info)
    tokenizer.save_to_preset(output_dir)  # So that training finds the tokenizer of the shards.
    _remove_partials(output_dir)  # Left by a killed run: never read, rebuilt below.
    ranges = corpus_ranges(paths, num_shards, pairing.file_format)
    tasks = [
        {"range": dataclasses.asdict(ranges[i]), "path": path, "index": i}
        for i, path in enumerate(shard_paths(output_dir, num_shards))
        if not tf.io.gfile.exists(path)
    ]
    return tasks, num_shards, info


def _remove_partials(output_dir: str) -> None:
    for path in tf.io.gfile.glob(os.path.join(output_dir, "*.partial*")):
        try:
            tf.io.gfile.remove(path)
        except tf.errors.NotFoundError:
            pass  # Renamed or removed by its writer meanwhile.


def prepared_info(tokenizer, pairing: PairingConfig, seed: int, num_shards: int, paths: list[str]) -> dict:
    """What `prepared.json` records: the tokenizer, the `PairingConfig` fields, the seed, the shards, the files."""
    return {
        "format": INFO_FORMAT,
        "tokenizer": tokenizer_fingerprint(tokenizer),
        "vocabulary_size": tokenizer.vocabulary_size(),
        "lowercase": tokenizer.lowercase,
        **dataclasses.asdict(pairing),
        "num_shards": num_shards,
        "seed": seed,
        "corpus": [[os.path.basename(path), tf.io.gfile.stat(path).length] for path in paths],
    }


def pairing_of(info: dict, where: str = INFO_FILE) -> PairingConfig:
    """The `PairingConfig` that a `prepared.json` records."""
    return from_dict(PairingConfig, info, where)


def shard_paths(directory: str, num_shards: int) -> list[str]:
    """The paths of the `num_shards` shards in `directory`, in order."""
    return [os.path.join(directory, SHARD_NAME.format(index=i, count=num_shards)) for i in range(num_shards)]


def _in_worker_processes(tokenizer, info: dict, tasks: list, workers: int):
    """This process and `workers - 1` `shard_worker` processes claim shards; yields reports, stops all if one fails."""
    from keras_bert3.data.shard_worker import file_claims

    reports = queue.Queue()  # (process, a report line, or None when its output ended)
    with tempfile.TemporaryDirectory() as tmp:
        claims_dir = os.path.join(tmp, "claims")
        os.makedirs(claims_dir)
        task_file = os.path.join(tmp, "tasks.json")
        with open(task_file, "w", encoding="utf-8") as f:
            json.dump(
                {
                    "tokenizer": tokenizer.get_config(),
                    "info": info,
                    "threads": 1,
                    "claims_dir": claims_dir,
                    "shards": tasks,
                },
                f,
            )
        logs = {}  # The logs of the processes whose output has not ended.
        for worker in range(min(workers, len(tasks)) - 1):
            log = open(os.path.join(tmp, f"worker{worker}.log"), "w+b")
            process = subprocess.Popen(
                [sys.executable, "-m", "keras_bert3.data.shard_worker", task_file],
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
            )
            logs[process] = log
            threading.Thread(target=_forward_lines, args=(process, reports), daemon=True).start()
        processes = list(logs.items())
        try:
            for report in write_shards(tokenizer, info, tasks, file_claims(claims_dir)):
                yield report
                yield from _drain(reports, logs, block=False)
            yield from _drain(reports, logs, block=True)
        finally:
            for process, log in processes:
                if process.poll() is None:
                    process.kill()
                process.wait()
                log.close()


def _drain(reports, logs: dict, block: bool):
    """The workers' reports so far (till every worker's output has ended, if `block`); raises if one failed."""
    while logs if block else not reports.empty():
        process, line = reports.get()
        if line is not None:
            report = json.loads(line)
            if "failed" in report:
                raise WriteFailed.from_parts(report["failed"])
            yield report
        elif process.wait() != 0:
            log = logs.pop(process)
            log.seek(0)
            tail = log.read().decode(errors="replace")[-3000:]
            raise RuntimeError(
                f"A prepare-data worker failed (exit {process.returncode}); "
                f"finished shards are kept, rerun to go on. Its log ends:\n{tail}"
            )
        else:
            logs.pop(process)


def _forward_lines(process, reports) -> None:
    for line in process.stdout:
        if line.startswith("{"):
            reports.put((process, line))
    reports.put((process, None))


def _write_or_check_info(output_dir: str, info: dict) -> None:
    path = os.path.join(output_dir, INFO_FILE)
    if tf.io.gfile.exists(path):
        with tf.io.gfile.GFile(path) as f:
            previous = json.load(f)
        changed = {key: (previous.get(key), info[key]) for key in info if previous.get(key) != info[key]}
        if changed:
            details = "; ".join(f"{key}: {a!r} -> {b!r}" for key, (a, b) in changed.items())
            raise ValueError(
                f"{output_dir} holds shards prepared with other settings or another corpus ({details}). "
                "Use the same settings to finish them, or another output directory."
            )
        return
    with tf.io.gfile.GFile(path + ".partial", "w") as f:
        json.dump(info, f, indent=2)
    tf.io.gfile.rename(path + ".partial", path, overwrite=True)


def read_prepared_info(directory: str) -> dict:
    """The settings `prepare_pretraining_data` wrote, once all shards are there; refuses another format."""
    path = os.path.join(directory, INFO_FILE)
    if not tf.io.gfile.exists(path):
        raise ValueError(
            f"{directory} holds no prepared shards ({INFO_FILE} is missing): run `keras-bert3 prepare-data` first."
        )
    with tf.io.gfile.GFile(path) as f:
        info = json.load(f)
    if info.get("format") != INFO_FORMAT:
        raise ValueError(
            f"{path} is of the format {info.get('format')!r}, this keras_bert3 reads {INFO_FORMAT!r}: "
            "prepare the data again with this version (`keras-bert3 prepare-data`)."
        )
    pairing_of(info, path)  # Raises if a setting is missing.
    count = info["num_shards"]
    missing = [i for i, path in enumerate(shard_paths(directory, count)) if not tf.io.gfile.exists(path)]
    if missing:
        raise ValueError(
            f"{directory} holds {count - len(missing)} of {count} shards: `prepare-data` did not finish "
            f"(shards {missing[:5]}... missing). Rerun the same command to build the rest."
        )
    return info


def damaged_shard(directory: str) -> tuple[str, str] | None:
    """The first shard of `directory` that does not read to the end, with TensorFlow's reason; None if
    all read. TensorFlow's `DataLossError` names no file: this finds it, reading every shard once."""
    info = read_prepared_info(directory)
    for path in shard_paths(directory, info["num_shards"]):
        try:
            tf.data.TFRecordDataset(path).reduce(tf.constant(0, tf.int64), lambda count, _: count + 1)
        except tf.errors.DataLossError as error:
            found = re.search(r"(truncated|corrupted) record at \d+", error.message)
            return path, found.group(0) if found else re.sub(r"\{\{.*?\}\}|\[Op:.*", "", error.message).strip()
    return None


@takes_old_keywords
def read_paired_shards(
    directory: str,
    tokenizer,
    masking: MaskingConfig = MaskingConfig(),
    batching: BatchingConfig = BatchingConfig(),
    seed: int = 0,
    *,
    pairing: PairingConfig | None = None,
    input_context: tf.distribute.InputContext | None = None,
    data_service: str | None = None,
) -> tf.data.Dataset:
    """Reads the shards of `prepare_pretraining_data` into the batches of `pretraining_dataset`, new masks every pass.

    Args:
        directory: the `output_dir` of `prepare_pretraining_data`.
        tokenizer: the `BertTokenizer` the shards were written with (its `[MASK]` and vocabulary draw the masks).
        masking, batching, seed, input_context: as `pretraining_dataset` (with `input_context`, this worker reads
            its own shards).
        pairing: optional `PairingConfig` of the run: its `sequence_length` and `next_sentence_prediction` must be
            the shards'.
        data_service: optional "host:port" of a `tf.data` service dispatcher (see `pretraining_dataset`).

    Raises:
        ValueError: shards missing (an unfinished `prepare-data`), or written by another tokenizer or for another
            sequence length than the run's.

    Example:
    >>> dataset = read_paired_shards("prepared", tokenizer, batching=BatchingConfig(batch_size=256))  # doctest: +SKIP
    """
    info = read_prepared_info(directory)
    _check_tokenizer(directory, info, tokenizer)
    shards = pairing_of(info)
    if pairing is not None:
        _check_pairing(directory, shards, pairing)
    raise_problems(masking.problems(shards) + batching.problems(shards))
    paths = files_for_worker(shard_paths(directory, info["num_shards"]), input_context, "shards")
    records = tf.data.Dataset.from_tensor_slices(paths).shuffle(len(paths), seed=seed, reshuffle_each_iteration=True)
    records = records.interleave(
        tf.data.TFRecordDataset,
        cycle_length=min(8, len(paths)),
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=True,
    )
    parse = _record_parser(shards.sequence_length, tokenizer.pad_token_id)
    return training_batches(
        records,
        tokenizer,
        shards,
        masking,
        batching,
        seed,
        parse=parse,
        input_context=input_context,
        data_service=data_service,
    )


def _check_tokenizer(directory: str, info: dict, tokenizer) -> None:
    fingerprint = tokenizer_fingerprint(tokenizer)
    if info["tokenizer"] != fingerprint:
        raise ValueError(
            f"The shards in {directory} were written with another tokenizer (fingerprint {info['tokenizer']}, "
            f"{info['vocabulary_size']} tokens, lowercase={info['lowercase']}) than this run's "
            f"(fingerprint {fingerprint}, {tokenizer.vocabulary_size()} tokens, lowercase={tokenizer.lowercase}): "
            "their ids would mean other words. Prepare the data again with this tokenizer, or train with theirs."
        )


def _check_pairing(directory: str, shards: PairingConfig, run: PairingConfig) -> None:
    """Refuses a run whose pairs' length or NSP are not the shards'."""
    if run.sequence_length != shards.sequence_length:
        raise ValueError(
            f"The shards in {directory} hold pairs of length {shards.sequence_length}, "
            f"the run asks for {run.sequence_length}: prepare the data again with "
            f"--sequence-length {run.sequence_length}, or train at {shards.sequence_length}."
        )
    nsp, wanted = shards.next_sentence_prediction, run.next_sentence_prediction
    if wanted != nsp:
        raise ValueError(
            f"The shards in {directory} were prepared {'with' if nsp else 'without'} next sentence prediction, "
            f"the run {'needs' if wanted else 'has no'} NSP labels: prepare the data again "
            f"{'without --no-nsp' if wanted else 'with --no-nsp'}, or train {'with' if nsp else 'without'} NSP."
        )


def _record_parser(sequence_length: int, pad_token_id: int):
    """A function of a batch of serialized records to pairs `(token_ids, segment_ids, lengths, labels)`."""
    features = {
        "input_ids": tf.io.RaggedFeature(tf.int64),
        "segment_ids": tf.io.RaggedFeature(tf.int64),
        "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
    }

    @tf.autograph.experimental.do_not_convert  # Traced as written, as `paired_examples`.
    def parse(records):
        parsed = tf.io.parse_example(records, features)
        token_ids = tf.cast(parsed["input_ids"], tf.int32)
        lengths = tf.cast(token_ids.row_lengths(), tf.int32)
        token_ids = token_ids.to_tensor(default_value=pad_token_id, shape=[None, sequence_length])
        segment_ids = tf.cast(parsed["segment_ids"], tf.int32).to_tensor(shape=[None, sequence_length])
        return token_ids, segment_ids, lengths, tf.cast(parsed["next_sentence_labels"][:, 0], tf.int32)

    return parse
