"""The `keras-bert3` command line.

    keras-bert3 demo [--output DIR]             the main job on the embedded corpus
    keras-bert3 convert PRESET OUTPUT_DIR       any preset -> keras_bert3 preset
    keras-bert3 export-hf PRESET OUTPUT_DIR     any preset -> Hugging Face checkpoint
    keras-bert3 embed PRESET TEXT [TEXT ...]    print sentence vectors
"""

import argparse
import os
import sys
import time


def _load(preset):
    from keras_bert3.models.bert_backbone import BertBackbone
    from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer

    return BertBackbone.from_preset(preset), BertTokenizer.from_preset(preset)


def convert(args) -> None:
    backbone, tokenizer = _load(args.preset)
    backbone.save_to_preset(args.output_dir)
    tokenizer.save_to_preset(args.output_dir)
    print(f"Wrote a keras_bert3 preset to {args.output_dir} ({backbone.count_params():,} parameters).")


def export_hf(args) -> None:
    from keras_bert3.presets.huggingface_checkpoint import export_backbone_to_huggingface

    backbone, tokenizer = _load(args.preset)
    export_backbone_to_huggingface(backbone, args.output_dir, vocabulary=tokenizer)
    print(f"Wrote a Hugging Face BERT checkpoint to {args.output_dir}.")


def embed(args) -> None:
    import numpy as np

    from keras_bert3.text_embedder import TextEmbedder

    embedder = TextEmbedder.from_preset(args.preset, output=args.output, normalize=args.normalize)
    vectors = embedder.embed(args.texts)
    np.set_printoptions(precision=4, suppress=True, linewidth=120)
    for text, vector in zip(args.texts, vectors):
        print(f"{text!r}: {vector[:8]} ... ({vector.shape[-1]} dims)")


def demo(args) -> None:
    """Learns a vocabulary on the embedded corpus, tokenizes it, builds a tiny
    BERT, embeds sentences, and checks the preset and Hugging Face round trips."""
    import numpy as np

    from keras_bert3.data.python_docs_corpus import python_docs_documents
    from keras_bert3.models.bert_backbone import BertBackbone
    from keras_bert3.presets.huggingface_checkpoint import export_backbone_to_huggingface
    from keras_bert3.text_embedder import TextEmbedder
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="keras-bert3", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    p = commands.add_parser("demo", help="the main job on the embedded corpus")
    p.add_argument("--output", default="runs/demo", help="directory for the presets it writes")
    p.add_argument("--vocabulary-size", type=int, default=4000)
    p.set_defaults(run=demo)

    p = commands.add_parser("convert", help="any preset -> keras_bert3 preset")
    p.add_argument("preset")
    p.add_argument("output_dir")
    p.set_defaults(run=convert)

    p = commands.add_parser("export-hf", help="any preset -> Hugging Face checkpoint")
    p.add_argument("preset")
    p.add_argument("output_dir")
    p.set_defaults(run=export_hf)

    p = commands.add_parser("embed", help="print text vectors")
    p.add_argument("preset")
    p.add_argument("texts", nargs="+")
    p.add_argument("--output", default="mean", choices=["pooled", "cls", "mean"])
    p.add_argument("--normalize", action="store_true")
    p.set_defaults(run=embed)

    args = parser.parse_args(argv)
    try:
        args.run(args)
    except (ValueError, OSError) as error:
        print(f"keras-bert3 {args.command}: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
