"""BertMaskedLM (fill-mask): a BERT-tiny pretrained by `keras-bert3 pretrain` (one run, shared by
the suite's two passes), written with its pretraining heads by `export-hf`, loads whole in Hugging Face's
`BertForPreTraining`, and Hugging Face's `fill-mask` pipeline gives the same top-5 tokens for each [MASK] of real
sentences as ours, scores within 1e-4, from either checkpoint. `keras-bert3 predict --task fill-mask` fills texts
given as arguments and in files, as the SavedModel of the model does; a text without [MASK] and a preset without a
masked-LM head are refused in one line."""

import glob
import hashlib
import json
import os
import sys

import numpy as np
import pytest

from keras_bert3.cli import main
from keras_bert3.models.bert_masked_lm import BertMaskedLM
from tests import warm_commands
from tests.computed_once import FOLDER
from tests.computed_once import computed_once
from tests.real_sentences import real_sentences
from tests.reference import import_reference
from tests.tiny_preset import write_tiny_preset

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PRETRAIN = ["--model", "tiny", "--steps", "60", "--batch-size", "8", "--sequence-length", "64"]
PRETRAIN += [
    "--max-predictions-per-seq",
    "10",
    "--vocabulary-size",
    "1500",
    "--learning-rate",
    "1e-3",
    "--verbose",
    "0",
]


@pytest.fixture(scope="module")
def pretrained(request) -> str:
    """The preset of a `keras-bert3 pretrain` run (BERT-tiny, 60 steps on 200 documents of the embedded corpus, on
    TensorFlow), made by the first pass that asks, for the same code and flags. The run takes the vocabulary that
    it would learn from those documents from `run_vocabulary` (learnt once per machine, as the pretraining run's
    tests take it), and its process is forked from a warm one (tests/warm_commands.py)."""
    sources = sorted(glob.glob(os.path.join(REPO, "keras_bert3", "**", "*.py"), recursive=True))
    key = hashlib.sha256(json.dumps(PRETRAIN).encode() + b"".join(open(p, "rb").read() for p in sources)).hexdigest()

    def pretrain():
        from keras_bert3_demo.default_corpus import default_corpus_documents

        folder = request.getfixturevalue("run_vocabulary")(os.path.join(FOLDER, f"pretrained-{key[:16]}"))
        corpus = os.path.join(FOLDER, f"corpus-{key[:16]}.txt")
        with open(corpus, "w", encoding="utf-8") as f:
            f.write("\n\n".join("\n".join(d) for d in default_corpus_documents()[:200]) + "\n")
        command = [sys.executable, "-m", "keras_bert3", "pretrain", "--output", folder, "--corpus", corpus, *PRETRAIN]
        warm_commands.run(command, check=True, cwd=REPO, env={**os.environ, "KERAS_BACKEND": "tensorflow"})
        return {"preset": os.path.join(folder, "preset")}

    return computed_once(key, pretrain)["preset"]


def masked_sentences(count: int) -> list[str]:
    """Real sentences with a word in the middle replaced by [MASK], every third with a second one too."""
    texts = []
    for i, sentence in enumerate(real_sentences(count, min_words=6, max_words=20)):
        words = sentence.split()
        for position in [len(words) // 2] + ([1] if i % 3 == 0 else []):
            words[position] = "[MASK]"
        texts.append(" ".join(words))
    return texts


@pytest.mark.slow
@pytest.mark.one_pass  # The model's forward pass on each backend: tests/serialization_test.py[masked_lm].
def test_the_pretrained_heads_fill_masks_as_hugging_face_fill_mask(pretrained, tmp_path, capsys):
    transformers = import_reference("transformers")
    assert main(["export-hf", pretrained, str(tmp_path / "hf")]) == 0
    assert "with its pretraining heads" in capsys.readouterr().out
    _, loading = transformers.BertForPreTraining.from_pretrained(str(tmp_path / "hf"), output_loading_info=True)
    assert not any(loading.values()), loading  # Every weight there, none left over.
    texts = masked_sentences(12)
    pipeline = transformers.pipeline("fill-mask", model=str(tmp_path / "hf"), top_k=5, device="cpu")
    theirs = [answer if isinstance(answer[0], list) else [answer] for answer in pipeline(texts)]  # Per [MASK].
    for preset in (pretrained, str(tmp_path / "hf")):
        ours = BertMaskedLM.from_preset(preset).predict(texts)
        assert [len(masks) for masks in ours] == [len(masks) for masks in theirs]
        for our_masks, their_masks in zip(ours, theirs):
            for our_tokens, their_tokens in zip(our_masks, their_masks):
                assert [t["token_id"] for t in our_tokens] == [t["token"] for t in their_tokens]
                scores = np.array([[t["score"] for t in our_tokens], [t["score"] for t in their_tokens]])
                assert np.abs(scores[0] - scores[1]).max() < 1e-4


@pytest.mark.slow
@pytest.mark.one_pass
def test_predict_fills_masks_from_a_pretrained_preset_its_saved_model_and_files(pretrained, tmp_path, capsys):
    texts = masked_sentences(6)
    assert main(["predict", "--task", "fill-mask", "--model", pretrained, *texts]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    expected = BertMaskedLM.from_preset(pretrained).predict(texts)
    assert [line.split("\t")[0].split() for line in printed] == [[m[0]["token"] for m in e] for e in expected]
    rows = tmp_path / "texts.jsonl"
    rows.write_text("".join(json.dumps({"sentence": text}) + "\n" for text in texts), "utf-8")
    fill = BertMaskedLM.from_preset(pretrained)
    fill.save_to_preset(str(tmp_path / "fill"))
    assert main(["export", "--model", str(tmp_path / "fill"), "--output", str(tmp_path / "saved_model")]) == 0
    outputs = {}
    for name, model, task in (("preset", pretrained, ["--task", "fill-mask"]), ("saved", tmp_path / "saved_model", [])):
        output = tmp_path / f"{name}.jsonl"
        arguments = ["predict", *task, "--model", model, "--input", rows, "--text-column", "sentence"]
        assert main([str(a) for a in [*arguments, "--output", output, "--verbose", 0]]) == 0
        outputs[name] = [json.loads(line) for line in output.read_text("utf-8").splitlines()]
    for ours, served, want in zip(outputs["preset"], outputs["saved"], expected):
        assert ours["top_tokens"] == served["top_tokens"] == [[t["token"] for t in mask] for mask in want]
        assert np.abs(np.array(ours["top_scores"]) - np.array(served["top_scores"])).max() < 1e-5
    capsys.readouterr()
    rows.write_text(json.dumps({"sentence": texts[0]}) + "\n" + json.dumps({"sentence": "No mask."}) + "\n", "utf-8")
    arguments = ["predict", "--task", "fill-mask", "--model", pretrained, "--input", rows, "--text-column", "sentence"]
    assert main([str(a) for a in [*arguments, "--output", tmp_path / "bad.jsonl"]]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 1 and f"{rows}, line 2: the text 'No mask.' has no [MASK]" in errors[0], errors
    no_head = write_tiny_preset(str(tmp_path / "no_head"), pretrained)
    assert main(["predict", "--task", "fill-mask", "--model", no_head, texts[0]]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 1 and "has no masked-LM head: fill-mask needs a model pretrained with it" in errors[0]
