"""Whether TensorFlow runs its CPU ops on oneDNN: built with it (x86 builds are) and on, by `TF_ENABLE_ONEDNN_OPTS=1`
or, unset, on Linux where the CPU has AVX512_VNNI, AVX512_BF16, AVX_VNNI or AMX (TensorFlow's `DefaultOneDnnPolicy`).

Private API (TensorFlow): `tensorflow.python.util._pywrap_util_port.IsMklEnabled`
(no public API says; TensorFlow's own tests ask it)."""

import tensorflow as tf
from tensorflow.python.util import _pywrap_util_port

from keras_bert3.upstream.private_api import require_private

require_private(_pywrap_util_port, "IsMklEnabled", package=tf, why="whether TensorFlow's CPU ops run on oneDNN")


def tensorflow_uses_onednn() -> bool:
    """True where TensorFlow's CPU kernels are oneDNN's."""
    return bool(_pywrap_util_port.IsMklEnabled())
