"""Derives the corpora the tests read from this machine's Python, once per
machine (cached in `~/.cache/keras_bert3`): the site-packages docstring corpus
(its files scanned by a pool of processes), and beside it, in a process of
its own, the default corpus, the code-tagging set, the topic-labelled
sentences and the questions. The
README's test command runs it beside the build of the TF Serving runtime, so
that neither pass waits for a derivation inside a test:

    python -m tests.derived_corpora
"""

import multiprocessing
import signal
import sys

from keras_bert3_demo.default_corpus import default_corpus_path
from keras_bert3_demo.docstring_code_tags import docstring_code_tags
from keras_bert3_demo.docstring_questions import docstring_questions
from keras_bert3_demo.docstring_topics import docstring_topics
from keras_bert3_demo.site_packages_corpus import site_packages_corpus_path


def derive_the_small_ones() -> None:
    print(default_corpus_path())
    docstring_code_tags()
    docstring_topics()
    docstring_questions()


if __name__ == "__main__":
    # Stopped (tests/run_all.sh ending early), it stops the corpus's worker processes too (SystemExit leaves the pool).
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    small_ones = multiprocessing.get_context("spawn").Process(target=derive_the_small_ones, daemon=True)
    small_ones.start()
    print(site_packages_corpus_path())
    small_ones.join()
    sys.exit(small_ones.exitcode)
