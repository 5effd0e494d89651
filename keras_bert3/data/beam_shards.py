"""Pre-paired shards built by an Apache Beam pipeline, for corpora that outgrow one machine: the shards of
`prepare_pretraining_data`, byte for byte, on any Beam runner. Each byte range is one element, written through
a file of its own renamed when whole, so a retried or duplicated element never leaves a broken shard. Needs
the `beam` extra: `pip install "keras-bert3[beam]"`.
"""

import logging
import os
import time
import uuid

try:
    import apache_beam as beam
    from apache_beam.metrics.metric import MetricsFilter
    from apache_beam.options.pipeline_options import PipelineOptions
except ImportError as error:  # pragma: no cover
    raise ImportError('Building shards with Beam needs Apache Beam: pip install "keras-bert3[beam]".') from error

from keras_bert3.data.pairing_config import PairingConfig
from keras_bert3.data.paired_shards import plan_shards
from keras_bert3.data.paired_shards import read_prepared_info
from keras_bert3.data.paired_shards import shard_paths
from keras_bert3.data.old_keywords import takes_old_keywords

LOGGER = logging.getLogger(__name__)


@takes_old_keywords
def prepare_pretraining_data_beam(
    files,
    tokenizer,
    output_dir: str,
    pairing: PairingConfig = PairingConfig(),
    *,
    seed: int = 0,
    num_shards: int | None = None,
    beam_options: list[str] | None = None,
    workers: int | None = None,
    harness_log_level: str = "ERROR",
    verbose: bool = True,
) -> list[str]:
    """Pairs a corpus into TFRecord shards with an Apache Beam pipeline; returns their paths.

    The shards, `prepared.json` and the tokenizer are those of `prepare_pretraining_data` with the same arguments;
    shards already in `output_dir` are kept, so a failed pipeline, run again, builds the rest.

    Args:
        files, tokenizer, output_dir, pairing, seed, num_shards, verbose: as `prepare_pretraining_data`; on a
            distributed runner, `files` and `output_dir` must be paths every worker reaches (`gs://...`).
        beam_options: Beam pipeline flags, e.g. `["--runner=DataflowRunner", "--project=P", "--region=R",
            "--temp_location=gs://B/tmp", "--extra_package=keras_bert3-0.1.0-py3-none-any.whl"]` (the workers
            need keras_bert3: `pip wheel --no-deps .`). Default: the DirectRunner in `workers` processes.
        workers: int. DirectRunner processes (default: the cores, at most one per shard); not with `beam_options`.
        harness_log_level: str. The DirectRunner workers' log level.
    """
    tasks, num_shards, info = plan_shards(files, tokenizer, output_dir, pairing, seed=seed, num_shards=num_shards)
    if not tasks:
        return shard_paths(output_dir, num_shards)
    if beam_options is None:
        workers = min(workers or len(os.sched_getaffinity(0)), len(tasks))
        beam_options = [
            "--runner=DirectRunner",
            "--direct_running_mode=multi_processing",
            f"--direct_num_workers={workers}",
            f"--default_sdk_harness_log_level={harness_log_level}",
        ]
    elif workers is not None:
        raise ValueError(
            "workers= sets the DirectRunner's processes; with beam_options, set the runner's own "
            "(e.g. --direct_num_workers=N, or --num_workers / --max_num_workers on Dataflow)."
        )
    if verbose and len(tasks) < num_shards:
        LOGGER.info(
            f"prepare_pretraining_data_beam: {num_shards - len(tasks)} of {num_shards} shards already written; "
            f"building {len(tasks)}."
        )
    start = time.perf_counter()
    pipeline = beam.Pipeline(options=PipelineOptions(beam_options))
    _ = (
        pipeline
        | "Shards" >> beam.Create(tasks)
        | "Spread" >> beam.Reshuffle()  # One shard per worker at a time, not one bundle of all.
        | "PairAndWrite" >> beam.ParDo(WriteShard(tokenizer.get_config(), info))
    )
    result = pipeline.run()
    result.wait_until_finish()
    examples = _counter(result, "examples")
    elapsed = time.perf_counter() - start
    if verbose:
        counted = f"{examples:,} examples" if examples is not None else "(the runner reports no counters)"
        LOGGER.info(
            f"prepare_pretraining_data_beam: {counted} in {len(tasks)} shards, {elapsed:.1f} s "
            f"({' '.join(beam_options)})."
        )
    read_prepared_info(output_dir)  # Raises if a shard is missing.
    return shard_paths(output_dir, num_shards)


class WriteShard(beam.DoFn):
    """Beam `DoFn`: a shard's task in, its shard written, its report out; the tokenizer is rebuilt per worker."""

    def __init__(self, tokenizer_config: dict, info: dict):
        self.tokenizer_config = tokenizer_config
        self.info = info

    def setup(self):
        import tensorflow_text  # noqa: F401  (the tokenizer's ops, in this worker process)

        from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer

        self.tokenizer = BertTokenizer.from_config(self.tokenizer_config)

    def process(self, task: dict):
        import tensorflow as tf

        from keras_bert3.data.shard_worker import write_shards

        if tf.io.gfile.exists(task["path"]):  # A retried element whose shard is done.
            return
        task = dict(task, partial=f"{task['path']}.partial-{uuid.uuid4().hex[:12]}")
        for report in write_shards(self.tokenizer, self.info, [task]):
            beam.metrics.Metrics.counter("keras_bert3", "examples").inc(report["examples"])
            yield report


def _counter(result, name: str) -> int | None:
    """A counter's committed total, or None where the runner reports none."""
    counters = result.metrics().query(MetricsFilter().with_namespace("keras_bert3").with_name(name))["counters"]
    return int(sum(counter.committed or 0 for counter in counters)) if counters else None
