"""Derives the corpora the tests read from this machine's Python, once per
machine (cached in `~/.cache/keras_bert3`): the site-packages docstring corpus
(about a minute on 2 cores), the default corpus, the code-tagging set,
the topic-labelled sentences and the questions. The
README's test command runs it beside the build of the TF Serving runtime, so
that neither pass waits for a derivation inside a test:

    python -m tests.derived_corpora
"""

import signal
import sys

from keras_bert3_demo.default_corpus import default_corpus_path
from keras_bert3_demo.docstring_code_tags import docstring_code_tags
from keras_bert3_demo.docstring_questions import docstring_questions
from keras_bert3_demo.docstring_topics import docstring_topics
from keras_bert3_demo.site_packages_corpus import site_packages_corpus_path

if __name__ == "__main__":
    # Stopped (tests/run_all.sh ending early), it stops the corpus's worker processes too (SystemExit leaves the pool).
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    print(site_packages_corpus_path(), default_corpus_path(), sep="\n")
    docstring_code_tags()
    docstring_topics()
    docstring_questions()
