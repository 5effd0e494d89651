"""What every task's SavedModel export shares: the endpoint on token ids, the padding, the write."""

import re

import keras

from keras_bert3.export.serving_warmup import write_warmup_requests
from keras_bert3.files.whole_folders import written_whole
from keras_bert3.preprocessing.bert_text_preprocessor import INPUT_NAMES
from keras_bert3.preprocessing.task_preprocessor import trim_to_longest
from keras_bert3.presets.task_preset import write_task_file

SAVED_MODEL_FILE = "saved_model.pb"  # Every SavedModel folder holds it.


def add_token_ids_endpoint(
    archive, model, name: str, fn, input_names=INPUT_NAMES, *, jit_compile=False, choices: bool = False, axes=None
):
    """Adds endpoint `name`: `fn(dict of int32 (batch, seq) inputs) -> dict of outputs` (`(batch, choices, seq)`
    with `choices`; `axes` names other inputs' own, e.g. `{"mask_positions": "(batch, masks)"}`); returns it,
    callable inside a `tf.function`.

    `jit_compile` (TensorFlow): `fn` is compiled by XLA, which TF Serving runs on a CPU only with
    `--xla_cpu_compilation_enabled=true`; a JAX export is XLA either way. On JAX, `fn` goes through
    jax2tf, shape-polymorphic in batch and length (at most the backbone's positions, so that the
    position check is decidable), lowered for the CPU too (`serving_platforms`).
    """
    import tensorflow as tf

    shapes = {key: "(batch, choices, length)" if choices else "(batch, length)" for key in input_names} | (axes or {})
    signature = [
        {key: tf.TensorSpec((None,) * (shapes[key].count(",") + 1), tf.int32, name=key) for key in input_names}
    ]
    if keras.backend.backend() != "jax":
        return archive.add_endpoint(name, tf.function(fn, jit_compile=True) if jit_compile else fn, signature)
    endpoint = archive.add_endpoint(
        name,
        fn,
        signature,
        jax2tf_kwargs={
            "polymorphic_shapes": [shapes],
            "polymorphic_constraints": [f"length <= {model.backbone.max_sequence_length}"],
            "native_serialization_platforms": serving_platforms(),
        },
    )

    def on_at_least_one_row(inputs):
        """jax2tf refuses a dimension of 0: an empty request runs one padding row, whose outputs are dropped."""
        rows = tf.shape(inputs[input_names[0]])[0]
        grow = lambda size: tf.maximum(1 - size, 0)  # noqa: E731
        padded = {
            key: tf.pad(value, [[0, grow(tf.shape(value)[axis])] for axis in range(value.shape.rank)])
            for key, value in inputs.items()
        }
        return {key: value[:rows] for key, value in endpoint(padded).items()}

    return on_at_least_one_row


def trim_for_serving(model_inputs: dict, jit_compile: bool, *, keep=()) -> dict:
    """`model_inputs` cut to the request's longest example for TensorFlow's graph executor, which pays
    per token; kept at the preprocessor's multiple for XLA, which compiles per shape. `keep` stay whole."""
    if jit_compile or keras.backend.backend() == "jax":
        return model_inputs
    return trim_to_longest(model_inputs, 1, keep=keep)


def serving_platforms() -> tuple[str, ...]:
    """The CPU and the accelerator JAX runs on: jax2tf lowers for the current platform alone by default,
    and a SavedModel written on a GPU would then refuse to run on a CPU."""
    import jax

    platform = jax.default_backend()
    if platform == "gpu":
        version = getattr(jax.local_devices()[0].client, "platform_version", "")
        platform = "rocm" if "rocm" in str(version).lower() else "cuda"
    return ("cpu",) if platform == "cpu" else ("cpu", platform)


def write_saved_model(archive, filepath: str, *, warmup: tuple | None = None, verbose: bool = False, task=None) -> None:
    """Writes the archive, warm-up records where `warmup` is `write_warmup_requests`' arguments
    after the folder, and where `task` (the task model) is given its `TASK_FILE` (what the commands
    read), to `filepath` whole or not at all (TF Serving never loads a half-written one);
    a failed write raises `WriteFailed`. No custom gradients: jax2tf has none for the dropout seeds."""
    import tensorflow as tf

    options = tf.saved_model.SaveOptions(experimental_custom_gradients=False)
    with written_whole(filepath, "the SavedModel", marker=SAVED_MODEL_FILE) as folder:
        try:
            archive.write_out(folder, options=options, verbose=verbose)
        except (
            tf.errors.ResourceExhaustedError,
            tf.errors.UnknownError,
            tf.errors.PermissionDeniedError,
            tf.errors.FailedPreconditionError,
            tf.errors.InternalError,
            tf.errors.DataLossError,
        ) as error:
            # TensorFlow's file system reports a failed write as one of these, not as an OSError.
            raise OSError(_reason(error.message)) from error
        if warmup is not None:
            write_warmup_requests(folder, *warmup)
        if task is not None:
            write_task_file(folder, task)


def _reason(message: str) -> str:
    """What failed, from a TensorFlow error message: without the op's name and, where the message ends in the cause
    ("...; No space left on device"), the cause alone."""
    message = re.sub(r"\{\{.*?\}\}|\s*\[Op:.*", "", message).strip().splitlines()[0]
    return message.rsplit("; ", 1)[-1]
