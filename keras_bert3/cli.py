"""The `keras-bert3` command line.

One subcommand per job (`keras-bert3 --help`): pretrain, prepare-data, data-service, convert,
export-hf, embed, finetune, export, evaluate, predict. The demo package beside it (keras_bert3_demo)
adds `demo`, `topics` and `pipeline` (the main job), and the corpus `pretrain` reads when given none.
"""

import contextlib
import argparse
import importlib.metadata
import logging
import os
import shlex
import signal
import sys
import threading

from keras_bert3.data.pairing_config import PairingConfig
from keras_bert3.data.setting_fields import add_flags
from keras_bert3.data.setting_fields import from_flags
from keras_bert3.files.write_failed import WriteFailed
from keras_bert3.flag_files import DefaultsShown
from keras_bert3.flag_files import add_config_flag
from keras_bert3.flag_files import with_config_file
from keras_bert3.jobs.served_model import LABEL_NAMES_FILE
from keras_bert3.jobs.served_model import check_exists  # noqa: F401  (a public name of this module before)
from keras_bert3.jobs.served_model import load_task
from keras_bert3.training.deferred_signals import TrainingStopped
from keras_bert3.training.finetuning_config import REQUIRED as FINETUNING_REQUIRED
from keras_bert3.training.finetuning_config import FinetuningConfig
from keras_bert3.training.pretraining_config import PretrainingConfig
from keras_bert3.training.pretraining_config import add_flags as add_pretraining_flags
from keras_bert3.training.pretraining_config import from_flags as pretraining_config_from_flags


def _load(preset):
    from keras_bert3.models.bert_backbone import BertBackbone
    from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer

    return BertBackbone.from_preset(preset), BertTokenizer.from_preset(preset)


def convert(args) -> None:
    """Writes PRESET's backbone and tokenizer as a keras_bert3 preset at OUTPUT_DIR, whole or not at all."""
    from keras_bert3.files.whole_folders import written_whole
    from keras_bert3.presets.preset_format import BACKBONE_CONFIG_FILE

    backbone, tokenizer = _load(args.preset)
    with written_whole(args.output_dir, "the preset", marker=BACKBONE_CONFIG_FILE) as folder:
        backbone.save_to_preset(folder)
        tokenizer.save_to_preset(folder)
    print(f"Wrote a keras_bert3 preset to {args.output_dir} ({backbone.count_params():,} parameters).")


def export_hf(args) -> None:
    from keras_bert3.files.whole_folders import written_whole
    from keras_bert3.presets.huggingface_checkpoint import HF_CONFIG_FILE
    from keras_bert3.presets.huggingface_checkpoint import export_backbone_to_huggingface

    from keras_bert3.models.bert_pretrainer import BertPretrainer
    from keras_bert3.presets.pretrainer_preset import stored_heads

    backbone, tokenizer = _load(args.preset)
    heads, stored = {}, stored_heads(args.preset)
    if stored is not None:  # A pretrained preset's heads go too: a Hugging Face BertForPreTraining (BertForMaskedLM).
        pretrainer = BertPretrainer.from_preset(args.preset, nsp=stored["nsp"])
        backbone = pretrainer.backbone
        heads = {"masked_lm_head": pretrainer.masked_lm_head}
        heads |= {"next_sentence_head": pretrainer.next_sentence_head} if stored["nsp"] else {}
    with written_whole(args.output_dir, "the Hugging Face checkpoint", marker=HF_CONFIG_FILE) as folder:
        export_backbone_to_huggingface(backbone, folder, vocabulary=tokenizer, **heads)
    kind = "" if not heads else " with its pretraining heads"
    print(f"Wrote a Hugging Face BERT checkpoint{kind} to {args.output_dir}.")


def embed(args) -> None:
    import numpy as np

    from keras_bert3.models.text_embedder import TextEmbedder

    embedder = TextEmbedder.from_preset(args.preset, output=args.output, normalize=args.normalize)
    vectors = embedder.embed(args.texts)
    np.set_printoptions(precision=4, suppress=True, linewidth=120)
    for text, vector in zip(args.texts, vectors):
        print(f"{text!r}: {vector[:8]} ... ({vector.shape[-1]} dims)")


def prepare_data(args) -> None:
    from keras_bert3.training.run_lock import run_lock

    # One prepare-data per local output folder (a remote one is the cluster's to share out).
    with contextlib.nullcontext() if "://" in args.output else run_lock(args.output):
        _prepare_data(args)


def _prepare_data(args) -> None:
    from keras_bert3.data.paired_shards import prepare_pretraining_data
    from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer

    if args.preset:
        tokenizer = BertTokenizer.from_preset(args.preset)
    else:
        from keras_bert3.data.corpus_reader import document_dataset
        from keras_bert3.tokenizers.wordpiece_vocabulary import learn_wordpiece_vocabulary

        os.makedirs(args.output, exist_ok=True)
        path = os.path.join(args.output, "vocabulary.txt")
        if not os.path.isfile(path):
            sentences = document_dataset(args.corpus, file_format=args.file_format, seed=args.seed).unbatch()
            learn_wordpiece_vocabulary(sentences, args.vocabulary_size, vocabulary_output_file=path)
        tokenizer = BertTokenizer(path)
    pairing = from_flags(PairingConfig, args)
    settings = dict(seed=args.seed, num_shards=args.num_shards, workers=args.workers)
    if args.beam or args.beam_options:
        from keras_bert3.data.beam_shards import prepare_pretraining_data_beam

        beam_options = shlex.split(args.beam_options) if args.beam_options else None
        log_level = "INFO" if debug_asked(args) else "ERROR"
        prepare_pretraining_data_beam(
            args.corpus,
            tokenizer,
            args.output,
            pairing,
            beam_options=beam_options,
            harness_log_level=log_level,
            **settings,
        )
    else:
        prepare_pretraining_data(args.corpus, tokenizer, args.output, pairing, **settings)
    print(
        f"Train on them with: keras-bert3 pretrain --corpus {args.output} --sequence-length {args.sequence_length} ..."
    )


def data_service(args) -> None:
    from keras_bert3.distribution.data_service_server import serve

    port = args.port if args.port is not None else (5050 if args.role == "dispatcher" else 0)
    serve(args.role, port=port, dispatcher=args.dispatcher, worker_address=args.worker_address, work_dir=args.work_dir)


def pretrain(args) -> None:
    import keras

    from keras_bert3.training.pretraining_run import pretrain as run

    if args.backend and args.backend != keras.backend.backend():
        raise ValueError(
            f"--backend {args.backend} but Keras runs on {keras.backend.backend()}: "
            f"set the environment variable KERAS_BACKEND={args.backend} before starting."
        )
    corpus = args.corpus or (args.default_corpus() if args.default_corpus else None)
    config = pretraining_config_from_flags(args, corpus=corpus)
    history = run(config, verbose=args.verbose)
    if history.get("loss"):
        first = {k: v[0] for k, v in history.items() if k != "step"}
        last = {k: v[-1] for k, v in history.items() if k != "step"}
        print("metric           first checkpoint   last checkpoint")
        for name in sorted(first):
            print(f"{name:<16} {first[name]:>16.4f} {last[name]:>17.4f}")
    with open(os.path.join(args.output, "preset", "vocabulary.txt"), encoding="utf-8") as f:
        tokens = sum(1 for _ in f)
    print(
        f"Preset: {args.output}/preset ({tokens:,}-token vocabulary)   Curves: {args.output}/training_curves.png   "
        f"TensorBoard: tensorboard --logdir {args.output}/logs"
    )


def finetune(args) -> None:
    from keras_bert3.jobs.finetuning_run import finetune as run

    config = from_flags(FinetuningConfig, args)
    if config.search:
        _search(config)
        return
    history = run(config)
    for name, values in history.items():
        print(f"{name:<24} {values[0]:.4f} -> {values[-1]:.4f}")
    print(
        f"Fine-tuned {config.task}: {config.output} (score it: keras-bert3 evaluate --model {config.output} --data FILE)."
    )


def _search(config) -> None:
    from keras_bert3.jobs.finetuning_search import TABLE_FILE
    from keras_bert3.jobs.finetuning_search import search

    rows = search(config)
    if not rows:  # A worker of a distributed search: the chief writes the result.
        return
    figures = [name for name in rows[0] if name.startswith("val_")]
    print("trial  learning_rate  batch_size  epochs  seed  best_epoch  " + "  ".join(figures))
    for row in rows:
        settings = f"{row['trial']:>5}  {row['learning_rate']:>13g}  {row['batch_size']:>10}  {row['epochs']:>6}"
        print(f"{settings}  {row['seed']:>4}  {row['best_epoch']:>10}  " + "  ".join(f"{row[f]:.4f}" for f in figures))
    print(f"Chosen: trial {rows[0]['trial']} -> {config.output} (all trials: {config.output}/{TABLE_FILE}.csv, .png)")


def evaluate(args) -> None:
    from keras_bert3.jobs.evaluation import evaluated

    report, job = evaluated(args.model, args.data, args, report_path=args.report)
    print("\n".join(job.report_lines(report)))
    for path in [args.report, *report.get("figures", [])] if args.report else []:
        print(f"Wrote {path}")


def export(args) -> None:
    if args.quantize and args.format != "onnx":
        raise ValueError(f"--quantize {args.quantize} applies to --format onnx only; the SavedModel keeps its weights.")
    if args.format == "onnx" and args.dtype != "float32":
        raise ValueError(
            f"--dtype {args.dtype} applies to the SavedModel; an ONNX export is float32 (or --quantize int8)."
        )
    task = load_task(args.model, dtype=args.dtype)
    if args.format == "onnx":
        task.export(args.output, format="onnx", quantize=args.quantize)
    else:
        task.export(args.output, warmup=not args.no_warmup, jit_compile=args.jit_compile)
    _copy_class_names(args.model, args.output)
    if args.format == "onnx":
        quantized = ", int8 weights" if args.quantize else ""
        print(f"Wrote {args.output}/model.onnx (token ids in{quantized}) and tokenizer.json (strings to ids).")
        return
    warmup = "" if args.no_warmup else ", with TF Serving warm-up records in assets.extra/"
    print(f"Wrote a SavedModel to {args.output}: serving_default takes strings, serve_token_ids takes ids{warmup}.")
    if args.jit_compile:
        print("The model is compiled by XLA: run TF Serving with --xla_cpu_compilation_enabled=true on a CPU.")


def _copy_class_names(model_dir: str, export_dir: str) -> None:
    """The preset's class_names.json beside the export, for `predict` and clients."""
    import shutil

    names = os.path.join(model_dir, LABEL_NAMES_FILE)
    if not os.path.isfile(names):
        return
    try:
        shutil.copy(names, os.path.join(export_dir, LABEL_NAMES_FILE))
    except OSError as error:
        raise WriteFailed(
            "the class names beside the export",
            export_dir,
            error,
            kept="The export itself is complete; copy class_names.json beside it.",
        ) from error


def predict(args) -> None:
    from keras_bert3.jobs.prediction_files import predict_file
    from keras_bert3.jobs.served_model import ServedModel
    from keras_bert3.training.finetuning_config import refuse_below_one

    refuse_below_one(args.batch_size, "--batch-size")
    if args.input:
        if args.texts:
            raise ValueError("Give texts as arguments or --input FILE, not both.")
        if not args.output:
            raise ValueError("--input needs --output FILE (.csv or .jsonl): where each row goes with its prediction.")
        options = dict(
            batch_size=args.batch_size,
            overwrite=args.overwrite,
            prediction_prefix=args.prediction_prefix,
            verbose=args.verbose,
            task=args.task,
        )
        rows = predict_file(args.model, args.input, args.output, args, **options)
        print(f"Wrote {rows:,} rows with their predictions to {args.output}.")
        return
    if not args.texts:
        raise ValueError("Give texts to predict as arguments, or --input FILE --output FILE.")
    model = ServedModel(args.model, task=args.task)
    if model.input_names != ["text"]:
        raise ValueError(
            f"{args.model} takes {' and '.join(model.input_names)}: give them in a file "
            "(--input FILE.jsonl --text-column ... --second-column ... --output FILE)."
        )
    for text, row in zip(args.texts, model({"text": list(args.texts)})):
        print("\t".join([_cell(value) for value in row.values()] + [text]))


def _cell(value) -> str:
    """A predicted field as `predict` prints it: lists joined by spaces (lists of lists by " | "), probabilities to 3
    places."""
    if isinstance(value, list):
        return (" | " if value and isinstance(value[0], list) else " ").join(_cell(item) for item in value)
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def debug_asked(args) -> bool:
    """`--debug` or `KERAS_BERT3_DEBUG`: tracebacks and the libraries' own logs."""
    return args.debug or os.environ.get("KERAS_BERT3_DEBUG", "") not in ("", "0")


# Entry points of this group add commands: each a function of the subcommands (`add_subparsers()`).
COMMAND_PLUGINS = "keras_bert3.commands"


def build_parser() -> argparse.ArgumentParser:
    """The `keras-bert3` command's parser: one subcommand per job, each added by its `_add_*` function."""
    parser = argparse.ArgumentParser(prog="keras-bert3", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the traceback of an error instead of its one line (also KERAS_BERT3_DEBUG=1)",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for add_command in (
        _add_pretrain,
        _add_data_service,
        _add_prepare_data,
        _add_convert,
        _add_embed,
        _add_finetune,
        _add_export,
        _add_evaluate,
        _add_predict,
    ):
        add_command(commands)
    for add_commands in importlib.metadata.entry_points(group=COMMAND_PLUGINS):
        add_commands.load()(commands)
    for command in commands.choices.values():
        command.formatter_class = DefaultsShown
    return parser


def _add_pretrain(commands) -> None:
    p = commands.add_parser("pretrain", help="pretrain BERT (MLM + NSP); resumes if OUTPUT has a checkpoint")
    add_pretraining_flags(p)  # One per field of PretrainingConfig and of its data configs.
    add_config_flag(p)
    p.add_argument("--backend", choices=["tensorflow", "jax"], help="checked against KERAS_BACKEND")
    p.add_argument("--verbose", type=int, default=1, help="0 silent, 1 progress bar, 2 a line per checkpoint")
    p.set_defaults(run=pretrain, default_corpus=None)  # A function that gives the corpus read without --corpus.


def _add_data_service(commands) -> None:
    p = commands.add_parser(
        "data-service", help="run a tf.data service dispatcher or worker for pretrain --data-service"
    )
    p.add_argument("role", choices=["dispatcher", "worker"])
    p.add_argument("--port", type=int, default=None, help="dispatcher default 5050; worker default any free port")
    p.add_argument("--dispatcher", metavar="HOST:PORT", help="the dispatcher's address (worker)")
    p.add_argument(
        "--worker-address",
        metavar="HOST:PORT",
        help="how trainers reach this worker (default: this host's name and its port)",
    )
    p.add_argument("--work-dir", help="dispatcher: journal its state here, so that a restarted dispatcher resumes")
    p.set_defaults(run=data_service)


# The prepare-data flags that are `PretrainingConfig`'s too (default and help written there).
PREPARE_DATA_RUN_FLAGS = ("vocabulary_size", "seed")


def _add_prepare_data(commands) -> None:
    p = commands.add_parser(
        "prepare-data", help="pair a corpus into shards, N processes, resumable; pretrain reads them"
    )
    p.add_argument("--corpus", required=True, help="files or glob")
    p.add_argument("--output", required=True, help="directory for the shards, prepared.json and the tokenizer")
    p.add_argument("--preset", help="the tokenizer of this preset; default: a vocabulary learnt on the corpus")
    add_flags(p, PairingConfig)  # One per PairingConfig field.
    add_flags(p, PretrainingConfig, names=PREPARE_DATA_RUN_FLAGS)
    p.add_argument("--workers", type=int, help="processes (default: one per 8 cores; with --beam, one per core)")
    p.add_argument("--num-shards", type=int, help="default: a multiple of 64, at most 256 MB of text each")
    p.add_argument(
        "--beam",
        action="store_true",
        help="build the shards with Apache Beam (the beam extra); default runner: DirectRunner, --workers processes",
    )
    p.add_argument(
        "--beam-options",
        metavar="FLAGS",
        help='Beam pipeline flags, e.g. "--runner=DataflowRunner --project=P --temp_location=gs://B/tmp"',
    )
    p.set_defaults(run=prepare_data)


def _add_convert(commands) -> None:
    """`convert` and `export-hf`: a preset of any format to a folder."""
    for name, run, into in (
        ("convert", convert, "keras_bert3 preset"),
        ("export-hf", export_hf, "Hugging Face checkpoint"),
    ):
        p = commands.add_parser(name, help=f"any preset -> {into}")
        p.add_argument("preset")
        p.add_argument("output_dir")
        p.set_defaults(run=run)


def _add_embed(commands) -> None:
    p = commands.add_parser("embed", help="print text vectors")
    p.add_argument("preset")
    p.add_argument("texts", nargs="+")
    p.add_argument("--output", default="mean", choices=["pooled", "cls", "mean"])
    p.add_argument("--normalize", action="store_true")
    p.set_defaults(run=embed)


def _add_finetune(commands) -> None:
    p = commands.add_parser(
        "finetune", help="fine-tune a task (--task: classifier, question-answerer, ...) on a file; resumable"
    )
    add_flags(p, FinetuningConfig, required=FINETUNING_REQUIRED)  # One per FinetuningConfig field.
    add_config_flag(p)
    p.set_defaults(run=finetune)


# The flags that name a file's columns: finetune's (FinetuningConfig's fields), evaluate's and predict's.
COLUMN_FLAGS = ("text_column", "second_column", "label_column", "label_separator", "tag_column")


def _add_evaluate(commands) -> None:
    p = commands.add_parser("evaluate", help="score a fine-tuned model on a labelled file; print and write a report")
    p.add_argument("--model", required=True, help="a preset written by finetune, or its SavedModel or ONNX export")
    p.add_argument("--data", required=True, help="a labelled file, as finetune's --train")
    p.add_argument(
        "--report", help="write the report here as JSON (a classifier's confusion matrix as a PNG beside it)"
    )
    add_flags(p, FinetuningConfig, names=COLUMN_FLAGS)
    p.set_defaults(run=evaluate)


def _add_export(commands) -> None:
    p = commands.add_parser("export", help="fine-tuned task preset -> SavedModel (or ONNX) that takes strings")
    p.add_argument("--model", required=True, help="a preset written by finetune")
    p.add_argument("--output", required=True)
    p.add_argument(
        "--format",
        choices=["tf_saved_model", "onnx"],
        default="tf_saved_model",
        help="onnx: model.onnx on token ids and tokenizer.json, for onnxruntime (docs/serving.md)",
    )
    p.add_argument("--quantize", choices=["int8"], help="onnx only: int8 weights (onnxruntime dynamic quantization)")
    p.add_argument("--no-warmup", action="store_true", help="leave out TF Serving's warm-up records")
    p.add_argument(
        "--jit-compile",
        action="store_true",
        help="compile the model with XLA (faster on CPU; TF Serving needs --xla_cpu_compilation_enabled=true)",
    )
    p.add_argument(
        "--dtype",
        choices=["float32", "bfloat16"],
        default="float32",
        help="bfloat16: weights and compute in bfloat16, for CPUs with amx_bf16 and AMD CPUs with avx512_bf16 "
        "(docs/serving.md)",
    )
    p.set_defaults(run=export)


def _add_predict(commands) -> None:
    p = commands.add_parser("predict", help="predict texts, or every row of a file, with a fine-tuned model")
    p.add_argument(
        "--model",
        required=True,
        help="a preset written by finetune, or a SavedModel or ONNX folder written by export (or with --task "
        "fill-mask, a pretrained preset)",
    )
    p.add_argument("texts", nargs="*", help="texts to predict (or --input)")
    p.add_argument(
        "--task",
        help="the task of a --model that is a pretrained preset, not a fine-tuned one: fill-mask (fills each [MASK])",
    )
    p.add_argument(
        "--input", help="a .csv or .jsonl file (columns by --text-column ...) or plain text, one text a line"
    )
    p.add_argument("--output", help="with --input: a .csv or .jsonl file, each input row with its prediction")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing --output; start over where a stopped run left rows",
    )
    p.add_argument(
        "--prediction-prefix",
        default="",
        help="put before the names of the prediction's fields (e.g. predicted_), where the input has columns of "
        "those names",
    )
    p.add_argument("--batch-size", type=int, default=64, help="rows a call of the model")
    p.add_argument("--verbose", type=int, default=1, help="0 silent, 1 a progress bar")
    add_flags(p, FinetuningConfig, names=COLUMN_FLAGS)
    p.set_defaults(run=predict)


class Terminated(BaseException):
    """SIGTERM in a command's main thread outside training, raised as Ctrl-C raises
    KeyboardInterrupt, so that the command removes what it was writing."""


def _raise_terminated(number, frame):
    raise Terminated


def main(argv=None) -> int:
    parser = build_parser()
    args = with_config_file(parser, sys.argv[1:] if argv is None else list(argv))
    debug = debug_asked(args)
    show_library_messages()
    keep_cudnn_out_of_command_buffers()
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _raise_terminated) if in_main_thread else None
    try:
        args.run(args)
    except TrainingStopped as stopped:  # A signal: the checkpoint of the step is written.
        print(f"keras-bert3 {args.command}: {stopped}", file=sys.stderr)
        return stopped.exit_code
    except (KeyboardInterrupt, Terminated) as stop:
        said = "interrupted" if isinstance(stop, KeyboardInterrupt) else "stopped by SIGTERM"
        print(f"keras-bert3 {args.command}: {said}.", file=sys.stderr)
        return 128 + (signal.SIGINT if isinstance(stop, KeyboardInterrupt) else signal.SIGTERM)
    except Exception as error:
        line = user_error_line(error)
        if debug or line is None:  # Internal errors show their traceback.
            raise
        print(f"keras-bert3 {args.command}: {line} (--debug shows where)", file=sys.stderr)
        return 2
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return 0


def keep_cudnn_out_of_command_buffers() -> None:
    """On JAX, before it starts: XLA_FLAGS that let cuDNN's attention apply dropout
    (`upstream/cudnn_attention_dropout.py`), unless the user set that flag."""
    import keras

    if keras.backend.backend() == "jax":
        from keras_bert3.upstream.cudnn_attention_dropout import leave_cudnn_out_of_command_buffers

        leave_cudnn_out_of_command_buffers()


def show_library_messages() -> None:
    """The `keras_bert3` logger's messages as plain lines, information on stdout and
    warnings on stderr, unless the process has set logging up."""
    library = logging.getLogger("keras_bert3")
    if library.handlers or logging.getLogger().handlers:
        return
    information = logging.StreamHandler(sys.stdout)
    information.addFilter(lambda record: record.levelno < logging.WARNING)
    warnings = logging.StreamHandler(sys.stderr)
    warnings.setLevel(logging.WARNING)
    for handler in (information, warnings):
        handler.setFormatter(logging.Formatter("%(message)s"))
        library.addHandler(handler)
    library.setLevel(logging.INFO)


def user_error_line(error: Exception) -> str | None:
    """The one line for an error a user can cause (ValueError, OSError, FloatingPointError,
    TensorFlow's missing files, the input pipeline's checks); None for any other."""
    if isinstance(error, (ValueError, OSError, FloatingPointError)):
        return str(error)
    tf = sys.modules.get("tensorflow")  # Not imported here for commands that never load it.
    if tf is not None and isinstance(error, (tf.errors.NotFoundError, tf.errors.PermissionDeniedError)):
        return error.message.strip().splitlines()[0]
    if tf is not None and isinstance(error, tf.errors.InvalidArgumentError) and "assertion failed: [" in error.message:
        from keras_bert3.training.pretraining_run import assertion_text

        return assertion_text(error)
    return None


if __name__ == "__main__":
    sys.exit(main())
