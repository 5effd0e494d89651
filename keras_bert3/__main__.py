"""`python -m keras_bert3` is the `keras-bert3` command."""

import sys

from keras_bert3.cli import main

sys.exit(main())
