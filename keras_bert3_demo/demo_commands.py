"""The demo commands of `keras-bert3`: `demo` (a tokenizer and preset tour),
`topics` (the embedded labelled set as CSV) and `pipeline` (the main job:
pretrain, topics, finetune, export, predict, each stage a `keras-bert3`
command), all on the demo data of this package; and `demo_corpus()`, the
corpus `keras-bert3 pretrain` reads when given none. `add_commands` adds
them to the command line: it is this distribution's entry point in
`keras_bert3.cli.COMMAND_PLUGINS` (pyproject.toml), so that the library
never imports this package."""

import os
import sys
import time


def demo(args) -> None:
    """Learns a vocabulary on the embedded corpus, tokenizes it, builds a tiny
    BERT, embeds sentences, and checks the preset and Hugging Face round trips."""
    import numpy as np

    from keras_bert3_demo.python_docs_corpus import python_docs_documents
    from keras_bert3.models.bert_backbone import BertBackbone
    from keras_bert3.models.text_embedder import TextEmbedder
    from keras_bert3.presets.huggingface_checkpoint import export_backbone_to_huggingface
    from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer
    from keras_bert3.tokenizers.wordpiece_vocabulary import learn_wordpiece_vocabulary

    os.makedirs(args.output, exist_ok=True)
    sentences = [s for document in python_docs_documents() for s in document]
    size = sum(len(s.encode()) for s in sentences)
    print(f"[1/5] Corpus: Python's reference docs, {len(sentences):,} sentences, {size / 1e6:.2f} MB.")

    start = time.perf_counter()
    vocabulary = learn_wordpiece_vocabulary(sentences, args.vocabulary_size)
    print(f"[2/5] Learned a WordPiece vocabulary of {len(vocabulary):,} tokens in {time.perf_counter() - start:.1f} s.")

    tokenizer = BertTokenizer(vocabulary)
    start = time.perf_counter()
    ids = tokenizer(sentences)
    elapsed = time.perf_counter() - start
    tokens = int(ids.flat_values.shape[0])
    unknown = int(np.sum(ids.flat_values.numpy() == tokenizer.unk_token_id))
    print(
        f"[3/5] Tokenized {len(sentences):,} sentences into {tokens:,} tokens in {elapsed:.2f} s "
        f"({len(sentences) / elapsed:,.0f} sentences/s); {unknown} unknown tokens. Example:\n"
        f"      {sentences[1][:70]!r}\n      -> {[tokenizer.id_to_token(int(i)) for i in ids[1][:16]]}"
    )

    backbone = BertBackbone.from_size("tiny", vocabulary_size=len(vocabulary), max_sequence_length=128)
    embedder = TextEmbedder(backbone, tokenizer, output="mean", sequence_length=128)
    start = time.perf_counter()
    vectors = embedder.embed(sentences[:256])
    print(
        f"[4/5] BERT-tiny ({backbone.count_params():,} parameters, random weights) embedded 256 sentences "
        f"in {time.perf_counter() - start:.1f} s -> {vectors.shape}."
    )

    preset_dir = os.path.join(args.output, "preset")
    backbone.save_to_preset(preset_dir)
    tokenizer.save_to_preset(preset_dir)
    again = TextEmbedder.from_preset(preset_dir, output="mean").embed(sentences[:256])
    hf_dir = os.path.join(args.output, "huggingface")
    export_backbone_to_huggingface(backbone, hf_dir, vocabulary=tokenizer)
    from_hf = TextEmbedder.from_preset(hf_dir, output="mean").embed(sentences[:256])
    print(
        f"[5/5] Saved {preset_dir} and {hf_dir}; reloaded outputs differ by "
        f"{np.abs(again - vectors).max():.1e} (preset) and {np.abs(from_hf - vectors).max():.1e} (Hugging Face format)."
    )


def demo_corpus() -> str:
    """The embedded corpus (`keras_bert3_demo`): Python's own documentation."""
    from keras_bert3_demo.default_corpus import default_corpus_path

    return default_corpus_path()


def topics(args) -> None:
    import csv

    from keras_bert3_demo.docstring_topics import docstring_topics

    data = docstring_topics()
    os.makedirs(args.output, exist_ok=True)
    for split in ("train", "test"):
        path = os.path.join(args.output, f"{split}.csv")
        with open(path, "w", encoding="utf-8", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["text", "label"])
            for text, label in zip(data[f"{split}_texts"], data[f"{split}_labels"]):
                writer.writerow([text, data["class_names"][label]])
        print(f"Wrote {path} ({len(data[f'{split}_texts']):,} sentences).")


def labelled_sets(args) -> None:
    from keras_bert3_demo.labelled_sets import write_labelled_sets

    for path in write_labelled_sets(args.output):
        print(f"Wrote {path}")


# Sentences for the pipeline's last stage (not in the labelled set).
PIPELINE_EXAMPLES = [
    "Send the message to the mail server and wait for the reply.",
    "Start a worker thread and wait until every task in the queue is done.",
    "Round the decimal number to two places.",
    "Remove the temporary directory and all the files in it.",
]


def pipeline(args) -> None:
    """The main job: each stage is a `keras-bert3` command, printed as it runs."""
    from keras_bert3.cli import main

    out = args.output
    stages = [
        [
            "pretrain",
            "--output",
            f"{out}/pretraining",
            "--steps",
            str(args.pretrain_steps),
            "--learning-rate",
            "1e-3",
            "--checkpoint-every",
            str(max(args.pretrain_steps // 10, 1)),
            "--verbose",
            "2",
        ],
        ["topics", "--output", f"{out}/topics"],
        [
            "finetune",
            "--preset",
            f"{out}/pretraining/preset",
            "--train",
            f"{out}/topics/train.csv",
            "--validation",
            f"{out}/topics/test.csv",
            "--text-column",
            "text",
            "--label-column",
            "label",
            "--epochs",
            str(args.finetune_epochs),
            "--learning-rate",
            "1e-4",
            "--output",
            f"{out}/classifier",
        ],
        ["export", "--model", f"{out}/classifier", "--output", f"{out}/serving/1"],
        ["predict", "--model", f"{out}/serving/1", *PIPELINE_EXAMPLES],
    ]
    for number, argv in enumerate(stages, start=1):
        print(
            f"\n[{number}/{len(stages)}] $ keras-bert3 {' '.join(repr(a) if ' ' in a else a for a in argv)}", flush=True
        )
        start = time.perf_counter()
        code = main(argv)
        if code > 128:  # Stopped by a signal, after a checkpoint: the same pipeline command goes on.
            print(
                f"keras-bert3 pipeline: stopped in stage {number} ({argv[0]}); run the same command to go on.",
                file=sys.stderr,
            )
            raise SystemExit(code)
        if code != 0:
            raise ValueError(f"stage {number} ({argv[0]}) failed; see the message above.")
        print(f"[{number}/{len(stages)}] {argv[0]}: {time.perf_counter() - start:.0f} s", flush=True)


def add_commands(commands) -> None:
    """Adds `demo`, `topics`, `labelled-sets` and `pipeline` to `keras-bert3`'s subcommands,
    and `demo_corpus` as the corpus of `pretrain` without `--corpus`."""
    p = commands.add_parser("demo", help="tokenizer and preset tour on the embedded corpus")
    p.add_argument("--output", default="runs/demo", help="directory for the presets it writes")
    p.add_argument("--vocabulary-size", type=int, default=4000)
    p.set_defaults(run=demo)
    p = commands.add_parser("topics", help="write the embedded labelled set (docstring sentences by topic) as CSV")
    p.add_argument("--output", required=True, help="directory for train.csv and test.csv")
    p.set_defaults(run=topics)
    p = commands.add_parser(
        "labelled-sets", help="write the embedded labelled sets of the three tasks as CSV, CoNLL and SQuAD JSON"
    )
    p.add_argument("--output", required=True, help="directory for topics/, code_tags/ and questions/")
    p.set_defaults(run=labelled_sets)
    p = commands.add_parser("pipeline", help="the main job: pretrain, fine-tune, export, predict from the export")
    p.add_argument("--output", required=True, help="run directory")
    p.add_argument("--pretrain-steps", type=int, default=1500)
    p.add_argument("--finetune-epochs", type=int, default=3)
    p.set_defaults(run=pipeline)
    commands.choices["pretrain"].set_defaults(default_corpus=demo_corpus)
