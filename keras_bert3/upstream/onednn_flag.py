"""Whether TensorFlow runs its CPU ops on oneDNN: built with it (x86 builds
are) and turned on. `TF_ENABLE_ONEDNN_OPTS=1` or `0` decides; unset, Linux
builds turn it on only on CPUs with AVX512_VNNI, AVX512_BF16, AVX_VNNI or
AMX (TensorFlow's `DefaultOneDnnPolicy`): not on AVX2-only CPUs.

Private API: `tensorflow.python.util._pywrap_util_port.IsMklEnabled`, what
TensorFlow's own tests ask; no public API says whether oneDNN is on. The
ops that take oneDNN's fused kernels at inference (`ops/layer_norm.py`,
`ops/masked_softmax.py`) take them only where it is.
"""

import tensorflow as tf
from tensorflow.python.util import _pywrap_util_port

from keras_bert3.upstream.private_api import require_private

require_private(_pywrap_util_port, "IsMklEnabled", package=tf, why="whether TensorFlow's CPU ops run on oneDNN")


def tensorflow_uses_onednn() -> bool:
    """True where TensorFlow's CPU kernels are oneDNN's."""
    return bool(_pywrap_util_port.IsMklEnabled())
