"""One `prepare-data` worker process: builds the shards it is given, printing a line per shard. Run as
`python -m keras_bert3.data.shard_worker TASKS.json`: a fresh interpreter, whatever the caller's script."""

import json
import os
import sys
import time

import tensorflow as tf

from keras_bert3.data.corpus_reader import corpus_ranges
from keras_bert3.data.document_group_pairer import DocumentGroupPairer
from keras_bert3.data.document_groups import corpus_groups
from keras_bert3.data.example_records import pair_records
from keras_bert3.data.paired_examples import pairing_function
from keras_bert3.data.pairing_config import PairingConfig
from keras_bert3.data.setting_fields import from_dict
from keras_bert3.data.without_autotune import without_autotune
from keras_bert3.files.write_failed import WriteFailed
from keras_bert3.files.write_failed import write_failures_named

KEPT = "The finished shards are kept: free space and run the same command to go on."


def write_shards(tokenizer, info: dict, shards: list[dict], claim=None):
    """Pairs each shard's range and writes it through `path.partial` (or its "partial" path), renamed
    when whole; yields a report per shard. `claim(index)`: if given, a shard is made only where it returns True."""
    if not shards:
        return
    some = shards[0]["range"]  # Every shard's range holds the corpus's files: all ranges follow from one.
    ranges = corpus_ranges(some["paths"], info["num_shards"], some["file_format"], sizes=some["sizes"])
    wanted = tf.constant([shard["index"] for shard in shards], tf.int64)

    def select(positions):
        positions = positions.filter(lambda position, seed: tf.reduce_any(tf.equal(wanted, position)))
        if claim is None:
            return positions
        return positions.filter(lambda position, seed: tf.py_function(lambda p: claim(int(p)), [position], tf.bool))

    pairing = from_dict(PairingConfig, info, "the shards' settings")  # As `prepared.json` records them.
    groups = corpus_groups(ranges, pairing.pairing_group, seed=info["seed"], select=select, in_order=True)
    pair = pairing_function(tokenizer, DocumentGroupPairer.for_tokenizer(tokenizer, **pairing.pairer_settings()))

    @tf.autograph.experimental.do_not_convert  # Traced as written, as `paired_examples`.
    def to_records(position, end, group, group_seed):
        token_ids, segment_ids, lengths, labels, _ = pair(group, group_seed)
        return position, end, pair_records(token_ids, segment_ids, lengths, labels)

    records = without_autotune(groups.map(to_records, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True))
    by_index = {shard["index"]: shard for shard in shards}
    writer, count, start = None, 0, time.perf_counter()
    for position, end, serialized in records.as_numpy_iterator():
        shard = by_index[position]
        partial = shard.get("partial", shard["path"] + ".partial")
        # A failed write (a full disk) names the folder; the caller removes the half-written shards.
        with write_failures_named(os.path.dirname(partial), "shards into", kept=KEPT):
            if writer is None:
                writer = tf.io.TFRecordWriter(partial)
            for record in serialized:
                writer.write(record)
            if end:
                writer.close()
                tf.io.gfile.rename(partial, shard["path"], overwrite=True)
        count += len(serialized)
        if end:
            yield {"index": shard["index"], "examples": count, "seconds": time.perf_counter() - start}
            writer, count, start = None, 0, time.perf_counter()


def file_claims(claims_dir: str):
    """`claim(index)` by files created exclusively in `claims_dir`: the first process to claim a shard makes it."""

    def claim(index) -> bool:
        try:
            os.close(os.open(os.path.join(claims_dir, str(index)), os.O_CREAT | os.O_EXCL))
            return True
        except FileExistsError:
            return False

    return claim


def main(task_file: str) -> None:
    from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer

    with open(task_file, encoding="utf-8") as f:
        tasks = json.load(f)
    tf.config.threading.set_inter_op_parallelism_threads(tasks["threads"])
    tf.config.threading.set_intra_op_parallelism_threads(tasks["threads"])
    tokenizer = BertTokenizer.from_config(tasks["tokenizer"])
    parent = os.getppid()
    try:
        for report in write_shards(tokenizer, tasks["info"], tasks["shards"], file_claims(tasks["claims_dir"])):
            print(json.dumps(report), flush=True)
            if os.getppid() != parent:  # The caller is gone: stop rather than work for nobody.
                sys.exit(1)
    except WriteFailed as failed:  # Raised again by the caller, as if here.
        print(json.dumps({"failed": failed.parts}), flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1])
