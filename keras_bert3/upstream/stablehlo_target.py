"""JAX exports written for the StableHLO version that the installed TensorFlow reads.

JAX writes its StableHLO artifact for readers four weeks old (hard-coded); TensorFlow, whose releases trail JAX's, fails
on a newer one, in TF Serving too ("unregistered operation 'vhlo.custom_call_v2' ... failed to deserialize portable
artifact"). An artifact's producer names its version, `StableHLO_v<target>` (openxla/stablehlo#1516).

Private APIs: `jax._src.export._export._module_to_bytecode` (replaced while `written_for_installed_tensorflow()` is
active), the writer it calls, `jax._src.lib._jax.mlir.serialize_portable_artifact`, and TensorFlow's
`tensorflow.compiler.mlir.stablehlo.stablehlo.get_current_version`."""

import contextlib

import jax
import tensorflow as tf
from jax._src import xla_bridge
from jax._src.export import _export
from jax._src.lib import _jax
from jax._src.lib.mlir.dialects import hlo
from tensorflow.compiler.mlir.stablehlo import stablehlo as tensorflow_stablehlo

from keras_bert3.upstream.private_api import require_private

require_private(_export, "_module_to_bytecode", package=jax, why="writing exports that the installed TensorFlow reads")
require_private(
    _jax.mlir, "serialize_portable_artifact", package=jax, why="writing exports that the installed TensorFlow reads"
)


def version_tuple(version: str) -> tuple[int, ...]:
    """`"1.13.7"` -> `(1, 13, 7)`."""
    return tuple(int(part) for part in version.split("."))


def export_stablehlo_version() -> str:
    """The StableHLO version of exports inside `written_for_installed_tensorflow()`:
    JAX's own choice, or the installed TensorFlow's where that is older."""
    jax_choice = hlo.get_version_from_compatibility_requirement(hlo.StablehloCompatibilityRequirement.WEEK_4)
    return min(jax_choice, tensorflow_stablehlo.get_current_version(), key=version_tuple)


def _module_to_bytecode(module) -> bytes:
    version = export_stablehlo_version()
    try:
        return _jax.mlir.serialize_portable_artifact(module, version, xla_bridge.get_backend().serialize_with_sdy)
    except Exception as error:  # JAX cannot express this model in StableHLO as old as TensorFlow's.
        raise RuntimeError(
            f"JAX {jax.__version__} cannot write this model for TensorFlow {tf.__version__}, which reads "
            f"StableHLO up to {tensorflow_stablehlo.get_current_version()} ({error}). Install a newer "
            "TensorFlow (and tensorflow-text) or an older JAX, or export with the TensorFlow backend "
            "(KERAS_BACKEND=tensorflow)."
        ) from error


@contextlib.contextmanager
def written_for_installed_tensorflow():
    """Inside, JAX writes exports for `export_stablehlo_version()`, which the
    installed TensorFlow (and TF Serving of that release or later) loads."""
    original = _export._module_to_bytecode
    _export._module_to_bytecode = _module_to_bytecode
    try:
        yield
    finally:
        _export._module_to_bytecode = original
